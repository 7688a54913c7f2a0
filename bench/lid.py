#!/usr/bin/env python3
"""Language ID side by side: the shipped model (or --model) against py3langid, pycld2 and lingua
on lines none of them trained on, accuracy and speed in one run.

    make bench-lid        # builds bench/.venv-lid (the three packages), then runs:
    bench/.venv-lid/bin/python bench/lid.py ../shared/data/corpus ../shared/data/sib200 \
        [--model FILE] [--laser "/path/to/python -m laser"] [--markdown OUT.md]

Held-out sets: the corpus dev split (every language; the recipe never trains on a dev line) and
the FLORES-200 dev sentences among SIB-200's rows (index_id < 997; neither the corpus nor the
recipe holds them). A package's languages are those of a set it can name (its codes mapped to
ISO 639-3, a 639-1 code to its macrolanguage and a macrolanguage to the member the set uses:
`ar` -> arb, `zh` -> zho, `ms` -> zsm); on them, macro accuracy (the mean over languages of the
share of lines named right; language only, not script) of the package and of the model on the
same lines, the model's counted two ways: strict (its code must be the line's language) and at
the package's granularity (a code the package cannot name, member of a macrolanguage that the
package names by its 639-1 or macrolanguage code, counts as that label: `ars` or `acm` as arb
where the package has only `ar`; where the package names both, as `id` and `ms`, it stays
strict). Then the model over every language of the corpus dev split, its per-language F1 and
its most frequent confusions.

Speed: each identifier in this process on one core (lines/s over the corpus dev lines), and
`laser lid` end to end as a subprocess on 100,000 dev lines (cycled): lines per second of wall
time and per second of CPU time (user + system of the process: lines/s per core), side by side
with the baseline: the same model through fasttext-predict (fastText's own C++ prediction, which
laser lid used before its own predictor), one line at a time, in a process that reads the
file and writes the same output (without laser lid's input checks). One BLAS thread.

    bench/.venv-lid/bin/python bench/lid.py ../shared/data/corpus ../shared/data/sib200 \
        --laser .venv/bin/laser --speed-only      # the two `laser lid` rows alone
    bench/.venv-lid/bin/python bench/lid.py ../shared/data/corpus ../shared/data/sib200 \
        --held-out-model build/lid-held/laser-lid.held-out.ftz --calibration-only
"""
from __future__ import annotations

import argparse
import itertools
import random
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")  # one BLAS thread, here and in the subprocesses

import numpy as np  # noqa: E402

from laser.lid.calibration import (LENGTH_BUCKETS, FitOptions,  # noqa: E402
                                   expected_calibration_error, fit_calibration)
from laser.lid.corpus import (SourceOf, corpus_files, dev_lines, flores_dev_rows,  # noqa: E402
                              is_short, language_of, pairs, piece_of, with_pieces)
from laser.lid.model import LanguageIdentifier, shipped_model_path  # noqa: E402
from laser.text.flores import MACROLANGUAGES  # noqa: E402
from laser.text.languages import iso_table  # noqa: E402

SPEED_LINES = 100_000
# A language with at most this many dev lines: its accuracy rests on a handful of lines, and
# the summary gives the macro accuracy without such languages too.
FEW_DEV_LINES = 30
# Old or regional codes the packages still print, as ISO 639-1.
OLD_CODES = {"iw": "he", "jw": "jv", "in": "id", "ji": "yi", "mo": "ro", "zh-hant": "zh",
             "zh-hans": "zh"}

# A language with more training lines than this is "big": out of source it must reach BIG_GOAL.
BIG_LANGUAGE = 2000
BIG_GOAL = 0.8
OUT_OF_SOURCE = "out of source"
SHORT = "out of source, at most 3 words"
PIECES = "pieces of 1-3 words of longer lines"

FLORES_DEV = "FLORES dev (SIB-200)"
ECE_LINES = 200

Identify = Callable[[list[str]], list[str]]  # lines -> ISO 639-3 code of each (or "")
# lines -> ISO 639-3 code of each (or "") and its probability
Score = Callable[[list[str]], tuple[list[str], list[float]]]


def package_code(code: str) -> str:
    """A package's code as printed, lowercased, without region or script subtags."""
    return OLD_CODES.get(code.lower(), code.lower()).split("-")[0].split("_")[0]


def iso3_of(code: str, known: set[str]) -> str:
    """An ISO 639-1/2/3 code as the ISO 639-3 code the held-out sets use: a 639-1 code as its
    macrolanguage where it has one (`ms` is Malay, not Minangkabau), a macrolanguage as its
    usual member unless the sets have the macrolanguage itself (`ar` -> arb, `zh` -> zho)."""
    code = package_code(code)
    if len(code) == 2:
        threes = members(code)
        code = next((three for three in threes if three in MACROLANGUAGES),
                    next((three for three in threes if three in known),
                         threes[0] if threes else code))
    if code not in known and code in MACROLANGUAGES:
        code = MACROLANGUAGES[code]
    return code


@lru_cache(maxsize=None)
def members(code: str) -> tuple[str, ...]:
    """The ISO 639-3 codes filed under a 639-1 code in laser/data/iso639.txt: its language, or
    its macrolanguage with every member (`ar`: ara, arb, ars, acm... as ISO 639-3 groups them).
    Cached: a package's speed is timed with its codes mapped, a line at a time."""
    return tuple(sorted(three for three, two in iso_table().items()
                        if two == code and len(three) == 3))


def package_view(codes: set[str], known: set[str]) -> dict[str, str]:
    """The model's ISO 639-3 codes -> the code a package with labels `codes` is scored with:
    a language the package names stays itself; any other member of a macrolanguage that the
    package names by its 639-1 code or its macrolanguage code becomes that label's language
    (`ars` -> arb for a package whose `ar` cannot tell the Arabic varieties apart); the rest
    stay themselves."""
    named = {iso3_of(code, known) for code in codes}
    view = {}
    for code in codes:
        code = package_code(code)
        group = (code if len(code) == 2 else iso_table().get(code, "")
                 if code in MACROLANGUAGES else "")
        for member in members(group) if group else []:
            if member not in named:
                view[member] = iso3_of(code, known)
    return view


def held_out(corpus: Path, sib200: Path, per_language: int) -> dict[str, dict[str, list[str]]]:
    """Set name -> ISO 639-3 language -> lines (at most `per_language` of each)."""
    dev = dev_lines(corpus, per_language)
    flores = {code.split("_")[0]: lines[:per_language]
              for code, lines in flores_dev_rows(sib200).items()}
    return {"corpus dev": dev, FLORES_DEV: flores}


def out_of_source_sets(corpus: Path, per_language: int) -> dict[str, dict[str, list[str]]]:
    """Set name -> language -> lines: each language's lines of its held-out source family
    (`SourceOf.out_of_source`), those of them that are short (`is_short`), and one piece of 1 to
    3 words (2 to 6 letters without spaces) of each longer one."""
    lines = SourceOf(corpus).out_of_source(corpus, per_language)
    rng = random.Random(0)
    pieces = {language: [piece for piece in (piece_of(line, rng) for line in texts
                                             if not is_short(line)) if piece]
              for language, texts in lines.items()}
    short = {language: [line for line in texts if is_short(line)] for language, texts in lines.items()}
    return {OUT_OF_SOURCE: lines,
            SHORT: {language: texts for language, texts in short.items() if texts},
            PIECES: {language: texts for language, texts in pieces.items() if texts}}


def training_lines(corpus: Path) -> Counter:
    """Language -> the number of its train pairs in the corpus."""
    return Counter({language_of(path): sum(1 for _ in pairs(path))
                    for path in corpus_files(corpus, "train")})


def ours(model: LanguageIdentifier) -> Identify:
    return lambda lines: [code.split("_")[0] for code in model.best(lines)]


def py3langid_identify(known: set[str]) -> tuple[Identify, set[str]]:
    """The identifier and the codes it can print (so for pycld2 and lingua)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier as Langid
    identifier = Langid.from_model_file(MODEL_FILE)
    return (lambda lines: [iso3_of(identifier.classify(line)[0], known) for line in lines],
            set(identifier.nb_classes))


def pycld2_identify(known: set[str]) -> tuple[Identify, set[str]]:
    import pycld2

    def one(line: str) -> str:
        try:
            reliable, _, details = pycld2.detect(line)
        except pycld2.error:
            return ""
        code = details[0][1]
        return "" if code == "un" else iso3_of(code, known)

    return (lambda lines: [one(line) for line in lines]), set(_cld2_detected()) - {"un"}


def _cld2_detected() -> list[str]:
    import pycld2
    names = {name.upper() for name in pycld2.DETECTED_LANGUAGES}
    return [code for name, code in pycld2.LANGUAGES if name.upper() in names]


def lingua_identify(known: set[str]) -> tuple[Identify, set[str]]:
    from lingua import Language, LanguageDetectorBuilder
    builder = LanguageDetectorBuilder.from_all_languages()
    detector = builder.with_preloaded_language_models().build()

    def one(language) -> str:
        return "" if language is None else iso3_of(language.iso_code_639_3.name, known)

    return ((lambda lines: [one(detector.detect_language_of(line)) for line in lines]),
            {language.iso_code_639_3.name for language in Language.all()})


def predictions(identify: Identify, sets: dict, languages: Optional[set[str]] = None):
    """Set -> language -> predicted codes, and the lines/s of `identify` (one core)."""
    found: dict[str, dict[str, list[str]]] = {}
    lines = seconds = 0.0
    for name, by_language in sets.items():
        found[name] = {}
        for language, texts in by_language.items():
            if languages is not None and language not in languages:
                continue
            started = time.process_time()
            found[name][language] = identify(texts)
            seconds += time.process_time() - started
            lines += len(texts)
    return found, lines / seconds if seconds else 0.0


def macro_accuracy(found: dict[str, list[str]], languages: set[str]) -> tuple[float, int]:
    scores = [sum(code == language for code in codes) / len(codes)
              for language, codes in found.items() if language in languages and codes]
    return (sum(scores) / len(scores) if scores else 0.0), len(scores)


def few_lines(found: dict[str, list[str]], most: int = FEW_DEV_LINES) -> set[str]:
    """The languages with at most `most` lines in the set."""
    return {language for language, codes in found.items() if len(codes) <= most}


def macro_interval(found: dict[str, list[str]], rounds: int = 1000) -> tuple[float, float]:
    """The 95% interval of the macro accuracy over resamplings of each language's lines (with
    replacement): how much the figure owes to which lines the set happens to hold."""
    rng = np.random.default_rng(0)
    right = [np.array([code == language for code in codes], float)
             for language, codes in found.items() if codes]
    macros = [np.mean([rng.choice(lines, len(lines)).mean() for lines in right])
              for _ in range(rounds)]
    low, high = np.percentile(macros, [2.5, 97.5])
    return float(low), float(high)


def seen_as(found: dict[str, list[str]], view: dict[str, str]) -> dict[str, list[str]]:
    """Predicted codes mapped through a package's view (`package_view`)."""
    return {language: [view.get(code, code) for code in codes]
            for language, codes in found.items()}


def f1_by_language(found: dict[str, list[str]]) -> dict[str, float]:
    """Per-language F1 of one set's predictions (precision over every line of the set)."""
    predicted = Counter(code for codes in found.values() for code in codes)
    scores = {}
    for language, codes in found.items():
        right = sum(code == language for code in codes)
        precision = right / predicted[language] if predicted[language] else 0.0
        recall = right / len(codes)
        scores[language] = 2 * precision * recall / (precision + recall) if right else 0.0
    return scores


def confusions(found: dict[str, list[str]], count: int) -> list[tuple[str, str, int, int]]:
    """The most frequent (true, predicted) pairs: (true, predicted, times, lines of true)."""
    pairs_ = Counter((language, code) for language, codes in found.items()
                     for code in codes if code != language)
    return [(true, predicted, times, len(found[true]))
            for (true, predicted), times in pairs_.most_common(count)]


def laser_lid_speed(command: list[str], sets: dict) -> tuple[float, float]:
    """`command` (a `laser lid` run, its IN and OUT the input and output files) on SPEED_LINES
    lines as a subprocess: (lines/s of wall time, of CPU time)."""
    lines = itertools.islice(itertools.cycle(
        [line for texts in sets["corpus dev"].values() for line in texts]), SPEED_LINES)
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "lines.txt"
        source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        files = {"IN": str(source), "OUT": str(Path(directory) / "out.tsv")}
        subprocess.run([files.get(part, part) for part in command], check=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return SPEED_LINES / wall, SPEED_LINES / cpu


def lid_commands(laser: list[str], lid_model: Optional[str]) -> dict[str, list[str]]:
    """The two ways `laser lid` is timed: laser's own predictor, and the baseline."""
    model = lid_model or str(shipped_model_path())
    return {"laser lid (laser's C kernel and numpy)":
            [*laser, "lid", "IN", "-o", "OUT", "--lid-model", model, "-q"],
            "baseline: fasttext-predict, one line at a time":
            [sys.executable, __file__, "--fasttext-predict-lid", model, "IN", "OUT"]}


def fasttext_predict_lid(model: str, source: str, out: str) -> None:
    """The baseline: `laser lid`'s output (`CODE<TAB>PROBABILITY` a line; `und` for a line
    without text) with the model run by fasttext-predict, as laser lid ran it before."""
    from fasttext_pybind import fasttext

    predictor = fasttext()
    predictor.loadModel(model)
    with open(source, encoding="utf-8") as lines, open(out, "w", encoding="utf-8") as f:
        for line in lines:
            text = " ".join(line.split())
            found = predictor.predict(text + "\n", 1, 0.0, "replace") if text else []
            f.write("\t".join(f"{label[len('__label__'):]}\t{min(probability, 1.0):.4f}"
                              for probability, label in found) if found else "und\t0.0000")
            f.write("\n")


def speed_table(laser: list[str], sets: dict, lid_model: Optional[str]) -> list[str]:
    out = [f"`laser lid` end to end on {SPEED_LINES:,} corpus dev lines (cycled), one BLAS thread:",
           "", "| run | lines/s (wall time) | lines/s per core (CPU time) |", "|---|---:|---:|"]
    for name, command in lid_commands(laser, lid_model).items():
        wall, per_core = laser_lid_speed(command, sets)
        out.append(f"| {name} | {wall:,.0f} | {per_core:,.0f} |")
        print(out[-1], file=sys.stderr)
    return out


def py3langid_scored(known: set[str]) -> Score:
    """py3langid's code and normalised probability of each line."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier as Langid
    identifier = Langid.from_model_file(MODEL_FILE, norm_probs=True)

    def score(lines: list[str]) -> tuple[list[str], list[float]]:
        found = [identifier.classify(line) for line in lines]
        return [iso3_of(code, known) for code, _ in found], [float(p) for _, p in found]

    return score


def lingua_scored(known: set[str]) -> Score:
    """lingua's likeliest language of each line and its confidence value."""
    from lingua import LanguageDetectorBuilder
    detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models() \
        .build()

    def score(lines: list[str]) -> tuple[list[str], list[float]]:
        best = [(detector.compute_language_confidence_values(line) or [None])[0]
                for line in lines]
        return ([iso3_of(value.language.iso_code_639_3.name, known) if value else ""
                 for value in best], [value.value if value else 0.0 for value in best])

    return score


def laser_scored(model: LanguageIdentifier) -> Score:
    def score(lines: list[str]) -> tuple[list[str], list[float]]:
        codes, probabilities = model.ranked(lines)
        return ([code[0].split("_")[0] if code[0] != "und" else "" for code in codes],
                [probability[0] for probability in probabilities])

    return score


def calibration_error(score: Score, by_language: dict[str, list[str]],
                      languages: Optional[set[str]] = None) -> tuple[float, int]:
    """The expected calibration error (laser.lid.calibration's, 15 bins) of `score`'s answers
    (language only) on at most ECE_LINES lines a language, over the lines it answered."""
    probabilities: list[float] = []
    correct: list[bool] = []
    for language, lines in by_language.items():
        if languages is not None and language not in languages:
            continue
        codes, chances = score(lines[:ECE_LINES])
        for code, chance in zip(codes, chances):
            if code:
                probabilities.append(chance)
                correct.append(code == language)
    return expected_calibration_error(probabilities, correct), len(probabilities)


def fitted(path: Optional[str], dev: dict[str, list[str]],
           starts: tuple[int, ...]) -> LanguageIdentifier:
    """The model at `path` with a calibration fitted in this run on the corpus dev lines and
    one piece of each (laser.lid.corpus.with_pieces: lines that no calibration table reports),
    a curve for each bucket of line lengths from `starts` ((1,): one for every line)."""
    raw = LanguageIdentifier(path, calibrated=False)
    model = LanguageIdentifier(path, calibrated=False)
    model.calibration = fit_calibration(raw.scored(*with_pieces(dev)), FitOptions(starts=starts))
    return model


def calibration_table(sets: dict, models: dict[str, Optional[str]], known: set[str]) -> list[str]:
    """The expected calibration error on each set that neither fit saw (the out-of-source sets
    for the held-out model, FLORES dev for the model): uncalibrated, with a calibration fitted
    here on the corpus dev split and its pieces (one curve for every line, and one for each
    bucket of line lengths, as tasks/lid_calibrate.py fits it), with its own calibration file
    where it has one, and py3langid's and lingua's on their languages. pycld2 reports no
    probability (its percentages are shares of the text's bytes)."""
    packages = {"py3langid": py3langid_scored(known), "lingua": lingua_scored(known)}
    package_languages = {"py3langid": {iso3_of(code, known) for code in py3langid_identify(known)[1]},
                         "lingua": {iso3_of(code, known) for code in lingua_identify(known)[1]}}
    out = [f"Expected calibration error (15 bins, the answered lines; at most {ECE_LINES} lines "
           "a language):", "", "| set | model | lines | uncalibrated | calibrated here on corpus "
           "dev, one curve | by line length | its calibration file | py3langid | lingua |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    dev = sets["corpus dev"]
    for model_name, path in models.items():
        own = LanguageIdentifier(path)
        ours_ = [LanguageIdentifier(path, calibrated=False), fitted(path, dev, (1,)),
                 fitted(path, dev, LENGTH_BUCKETS)]
        for set_name in ([FLORES_DEV] if model_name == "model" else [OUT_OF_SOURCE, SHORT, PIECES]):
            by_language = sets[set_name]
            errors = [calibration_error(laser_scored(model), by_language) for model in ours_]
            mine = (f"{calibration_error(laser_scored(own), by_language)[0]:.3f}"
                    if own.calibration else "none")
            theirs = [calibration_error(score, by_language, package_languages[name])[0]
                      for name, score in packages.items()]
            out.append(f"| {set_name} | {model_name} | {errors[0][1]:,} | "
                       + " | ".join(f"{error:.3f}" for error, _ in errors)
                       + f" | {mine} | {theirs[0]:.3f} | {theirs[1]:.3f} |")
            print(out[-1], file=sys.stderr)
    return out + ["", same_answers(sets, models["model"]), ""]


def same_answers(sets: dict, path: Optional[str]) -> str:
    """Whether the model's calibration file leaves its answers as they are: the same 3 best
    codes, in the same order, on every corpus dev and FLORES dev line."""
    raw, own = LanguageIdentifier(path, calibrated=False), LanguageIdentifier(path)
    lines = [line for name in ("corpus dev", FLORES_DEV) for texts in sets[name].values()
             for line in texts]
    same = sum(a == b for a, b in zip(raw.ranked(lines, 3)[0], own.ranked(lines, 3)[0]))
    return (f"The model with its calibration file and without: the same 3 best codes in the "
            f"same order on {same:,} of the {len(lines):,} corpus dev and FLORES dev lines.")


def package_table(sets: dict, ours_found: dict, known: set[str]) -> list[str]:
    """Each package against the model on each set, on the package's languages."""
    out = ["| package | set | languages | its macro accuracy | the model's, strict | "
           "the model's, at the package's granularity | package lines/s (one core) |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for name, make in (("py3langid", py3langid_identify), ("pycld2", pycld2_identify),
                       ("lingua", lingua_identify)):
        identify, codes = make(known)
        languages = {iso3_of(code, known) for code in codes}
        view = package_view(codes, known)
        found, speed = predictions(identify, sets, languages)
        for set_name in sets:
            theirs, count = macro_accuracy(found[set_name], languages)
            strict, _ = macro_accuracy(ours_found[set_name], languages)
            coarse, _ = macro_accuracy(seen_as(ours_found[set_name], view), languages)
            out.append(f"| {name} | {set_name} | {count} | {theirs:.1%} | {strict:.1%} | "
                       f"{coarse:.1%} | {speed:,.0f} |")
            print(out[-1], file=sys.stderr)
    return out


def summary(ours_found: dict, ours_speed: float, known: set[str]) -> list[str]:
    """The model over every language of the corpus dev split and of FLORES dev."""
    dev = ours_found["corpus dev"]
    overall, count = macro_accuracy(dev, set(dev))
    low, high = macro_interval(dev)
    few = few_lines(dev)
    most, most_count = macro_accuracy(dev, set(dev) - few)
    least, _ = macro_accuracy(dev, few)
    flores, flores_count = macro_accuracy(ours_found[FLORES_DEV], known)
    return ["", f"The model over all {count} corpus dev languages: macro accuracy {overall:.1%} "
            f"(95% interval over resampled dev lines: {low:.1%} to {high:.1%}); over the "
            f"{most_count} with more than {FEW_DEV_LINES} dev lines {most:.1%}, over the other "
            f"{len(few)} ({sum(len(dev[language]) for language in few)} lines) {least:.1%}; "
            f"over the {flores_count} FLORES dev languages: {flores:.1%}. In this process "
            f"{ours_speed:,.0f} lines/s on one core.", ""]


def out_of_source_summary(ours_found: dict, trained: Counter) -> list[str]:
    """The held-out model over every language of the out-of-source sets, and the big languages
    (more than BIG_LANGUAGE train pairs) below BIG_GOAL out of source."""
    out = []
    for name in (OUT_OF_SOURCE, SHORT, PIECES):
        found = ours_found[name]
        overall, count = macro_accuracy(found, set(found))
        low, high = macro_interval(found)
        big = {language for language in found if trained[language] > BIG_LANGUAGE}
        big_macro, big_count = macro_accuracy(found, big)
        out.append(f"The held-out model on {name}: {count} languages, "
                   f"{sum(map(len, found.values())):,} lines, macro accuracy {overall:.1%} "
                   f"(95% interval {low:.1%} to {high:.1%}); over the {big_count} with more "
                   f"than {BIG_LANGUAGE:,} train pairs {big_macro:.1%}.")
    found = ours_found[OUT_OF_SOURCE]
    out += ["", f"Languages with more than {BIG_LANGUAGE:,} train pairs below {BIG_GOAL:.0%} out "
            "of source:", "", "| language | train pairs | lines | accuracy | read most as |",
            "|---|---:|---:|---:|---|"]
    for language in sorted(found, key=lambda code: accuracy_of(found, code)):
        accuracy = accuracy_of(found, language)
        if trained[language] > BIG_LANGUAGE and accuracy < BIG_GOAL:
            wrong = Counter(code for code in found[language] if code != language)
            top = ", ".join(f"{code} {times}" for code, times in wrong.most_common(3))
            out.append(f"| {language} | {trained[language]:,} | {len(found[language])} | "
                       f"{accuracy:.1%} | {top} |")
    return out + [""]


def accuracy_of(found: dict[str, list[str]], language: str) -> float:
    codes = found[language]
    return sum(code == language for code in codes) / len(codes)


def known_languages(sets: dict) -> set[str]:
    return {language for by_language in sets.values() for language in by_language}


def calibrated_models(args: argparse.Namespace) -> dict[str, Optional[str]]:
    """The calibration table's models: the model, scored on FLORES dev, and the held-out one."""
    return {"model": args.model, "held-out model": args.held_out_model}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("sib200", type=Path)
    parser.add_argument("--model", help="a fastText language-ID file (default: the shipped one)")
    parser.add_argument("--laser", default=f"{sys.executable} -m laser",
                        help="the command that runs laser, for the end-to-end speed")
    parser.add_argument("--per-language", type=int, default=1000)
    parser.add_argument("--held-out-model", help="the recipe's model with each language's held-out "
                        "source left out (tasks/lid_model.py --hold-out-sources): scored on the "
                        "out-of-source, short-line and piece sets")
    parser.add_argument("--out-of-source-per-language", type=int, default=500)
    parser.add_argument("--markdown", type=Path, help="also write the tables here")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the end-to-end speed of `laser lid` and its baseline")
    parser.add_argument("--calibration-only", action="store_true",
                        help="only the calibration table (needs --held-out-model)")
    if sys.argv[1:2] == ["--fasttext-predict-lid"]:  # the baseline's subprocess
        fasttext_predict_lid(*sys.argv[2:5])
        return
    args = parser.parse_args()
    if args.calibration_only and not args.held_out_model:
        parser.error("--calibration-only needs --held-out-model")
    if args.speed_only:
        sets = {"corpus dev": held_out(args.corpus, args.sib200, args.per_language)["corpus dev"]}
        print("\n".join(speed_table(shlex.split(args.laser), sets, args.model)))
        return

    sets = held_out(args.corpus, args.sib200, args.per_language)
    if args.calibration_only:
        sets.update(out_of_source_sets(args.corpus, args.out_of_source_per_language))
        print("\n".join(calibration_table(sets, calibrated_models(args), known_languages(sets))))
        return
    model = LanguageIdentifier(args.model)
    ours_found, ours_speed = predictions(ours(model), sets)
    if args.held_out_model:
        oos = out_of_source_sets(args.corpus, args.out_of_source_per_language)
        held_found, _ = predictions(ours(LanguageIdentifier(args.held_out_model)), oos)
        sets, ours_found = {**sets, **oos}, {**ours_found, **held_found}
    known = known_languages(sets)
    out = package_table(sets, ours_found, known)
    out += summary(ours_found, ours_speed, known)
    if args.held_out_model:
        out += out_of_source_summary(ours_found, training_lines(args.corpus))
        out += calibration_table(sets, calibrated_models(args), known)
    out += speed_table(shlex.split(args.laser), sets, args.model)
    dev = ours_found["corpus dev"]
    out += ["", "Per-language F1 on the corpus dev split (worst first):", "",
            "| language | lines | accuracy | F1 |", "|---|---:|---:|---:|"]
    f1 = f1_by_language(dev)
    for language in sorted(f1, key=lambda code: (f1[code], code)):
        accuracy = sum(code == language for code in dev[language]) / len(dev[language])
        out.append(f"| {language} | {len(dev[language])} | {accuracy:.1%} | {f1[language]:.3f} |")
    out += ["", "Most frequent confusions on the corpus dev split:", "",
            "| language | read as | lines | of |", "|---|---|---:|---:|"]
    out += [f"| {true} | {predicted} | {times} | {total} |"
            for true, predicted, times, total in confusions(dev, 25)]
    text = "\n".join(out) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
