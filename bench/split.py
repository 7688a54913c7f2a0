#!/usr/bin/env python3
"""Sentence splitting side by side: laser's splitter against sentencex, pysbd,
sentence-splitter (Moses' rules) and blingfire, boundary F1 and speed in one run.

    make bench-split      # builds bench/.venv-split (the four packages), then runs:
    bench/.venv-split/bin/python bench/split.py ../shared/data/sib200 ../shared/data/corpus \
        [--markdown OUT.md]

Held-out paragraphs: the FLORES-200 dev sentences among SIB-200's rows (index_id < 997, in
their order, without the CSV quoting some rows carry; neither the corpus nor the splitter's recipe holds them: the recipe drops any train
sentence equal to one), joined 2 to 6 at a time (laser.text.splitting.paragraphs: with a space,
with nothing in Chinese and Japanese). Then, labelled apart, paragraphs built the same way from the
corpus dev split (which the recipe never trains on) of the languages SIB-200 lacks among the
scripts that write few full stops (Khmer, Lao, Burmese).

A boundary is where a sentence after the first starts (its first character's offset), so
splitters that keep or drop the spaces between sentences are scored alike; boundary F1 per
language, macro F1 over a splitter's own languages (pysbd's and sentence-splitter's lists;
sentencex and blingfire take every language) beside laser's over the same languages. Speed: each
splitter over all the FLORES paragraphs in this process, MB of UTF-8 text per second of CPU time
(one core).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from laser.lid.corpus import flores_dev_rows, pairs  # noqa: E402
from laser.text.sentences import split_sentences  # noqa: E402
from laser.text.splitting.model import model_language  # noqa: E402
from laser.text.splitting.paragraphs import Paragraph, paragraphs, unquoted  # noqa: E402

SEED = 7
# The corpus dev languages reported apart: scripts that write few full stops, absent from SIB-200.
DEV_LANGUAGES = ("khm", "lao", "mya")
SENTENCE_SPLITTER_LANGUAGES = frozenset(
    "ca cs da de el en es fi fr hu is it lt lv nl no pl pt ro ru sk sl sv tr".split())

Split = Callable[[str], list[str]]


@dataclass
class Splitter:
    """A splitter by name: which languages (model keys) it has, and its split of a language."""

    name: str
    has: Callable[[str], bool]
    make: Callable[[str], Split]


def rivals() -> list[Splitter]:
    """The four packages, imported here (they live in the bench's own virtualenv)."""
    import blingfire
    import pysbd
    import sentence_splitter
    import sentencex
    from pysbd.languages import LANGUAGE_CODES

    def pysbd_split(lang: str) -> Split:
        segmenter = pysbd.Segmenter(language=lang, clean=False)
        return segmenter.segment

    def moses_split(lang: str) -> Split:
        return sentence_splitter.SentenceSplitter(language=lang).split

    return [
        Splitter("sentencex", lambda lang: True,
                 lambda lang: lambda text: list(sentencex.segment(lang, text))),
        Splitter("pysbd", lambda lang: lang in LANGUAGE_CODES, pysbd_split),
        Splitter("sentence-splitter", lambda lang: lang in SENTENCE_SPLITTER_LANGUAGES,
                 moses_split),
        Splitter("blingfire", lambda lang: True,
                 lambda lang: lambda text: blingfire.text_to_sentences(text).split("\n")),
    ]


LASER = Splitter("laser", lambda lang: True,
                 lambda lang: lambda text: split_sentences(text, lang))


def starts(text: str, sentences: list[str]) -> set[int]:
    """Where each sentence after the first starts in `text` (found in order; a sentence a
    splitter changed is looked for by its first characters)."""
    found, position = set(), 0
    for sentence in sentences:
        piece = sentence.strip()
        if not piece:
            continue
        at = text.find(piece, position)
        if at < 0:
            at = text.find(piece[:8], position)
        if at < 0:
            continue
        if position:
            found.add(at)
        position = at + len(piece) if at + len(piece) > position else position + 1
    return found - {0}


def true_starts(paragraph: Paragraph) -> set[int]:
    return {start for _, start in paragraph.boundaries}


@dataclass
class Score:
    """Boundary counts and the time and text a splitter spent on one language."""

    hits: int = 0
    found: int = 0
    true: int = 0
    seconds: float = 0.0
    size: int = 0

    def f1(self) -> float:
        return 200 * self.hits / (self.found + self.true) if self.found + self.true else 100.0

    def add(self, split: Split, paragraph: Paragraph) -> None:
        began = time.process_time()
        sentences = split(paragraph.text)
        self.seconds += time.process_time() - began
        self.size += len(paragraph.text.encode())
        predicted, truth = starts(paragraph.text, sentences), true_starts(paragraph)
        self.hits += len(predicted & truth)
        self.found += len(predicted)
        self.true += len(truth)


@dataclass
class Results:
    """Score per splitter and language of one set of paragraphs."""

    scores: dict[str, dict[str, Score]] = field(default_factory=dict)

    def run(self, splitter: Splitter, lang: str, items: list[Paragraph]) -> None:
        key = model_language(lang)
        if not splitter.has(key):
            return
        score = self.scores.setdefault(splitter.name, {}).setdefault(lang, Score())
        split = splitter.make(key)
        for paragraph in items:
            score.add(split, paragraph)


def flores_sets(sib200: Path) -> dict[str, list[Paragraph]]:
    return {code: list(paragraphs([unquoted(row) for row in rows], model_language(code), SEED))
            for code, rows in flores_dev_rows(sib200).items()}


def dev_sets(corpus: Path) -> dict[str, list[Paragraph]]:
    sets = {}
    for code in DEV_LANGUAGES:
        path = corpus / "dev" / f"{code}-eng.tsv.gz"
        if path.exists():
            sentences = [unquoted(foreign) for foreign, _ in pairs(path) if foreign]
            sets[code] = list(paragraphs(sentences, model_language(code), SEED))
    return sets


def macro(scores: dict[str, Score], languages: list[str]) -> float:
    return sum(scores[lang].f1() for lang in languages) / len(languages) if languages else 0.0


def speed(scores: dict[str, Score]) -> float:
    """MB of text per CPU second over every language."""
    seconds = sum(score.seconds for score in scores.values())
    return sum(score.size for score in scores.values()) / 1e6 / seconds if seconds else 0.0


def table(results: Results, names: list[str], title: str) -> list[str]:
    """Per-language F1 (a dash where a splitter lacks the language), then each rival's macro F1
    on its own languages beside laser's on the same, then the speed."""
    languages = sorted(results.scores["laser"])
    lines = [f"### {title}", "", "| language | " + " | ".join(names) + " |",
             "|---|" + "---:|" * len(names)]
    for lang in languages:
        cells = [f"{results.scores[name][lang].f1():.1f}" if lang in results.scores.get(name, {})
                 else "–" for name in names]
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    lines += ["", "| splitter | languages | its macro F1 | laser's macro F1 on them | MB/s |",
              "|---|---:|---:|---:|---:|"]
    for name in names:
        own = sorted(results.scores.get(name, {}))
        lines.append(f"| {name} | {len(own)} | {macro(results.scores.get(name, {}), own):.1f} | "
                     f"{macro(results.scores['laser'], own):.1f} | "
                     f"{speed(results.scores.get(name, {})):.2f} |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sib200", type=Path)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--laser-only", action="store_true", help="no rivals (laser's venv)")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    splitters = [LASER] + ([] if args.laser_only else rivals())
    names = [splitter.name for splitter in splitters]
    output = []
    for title, sets in (("FLORES-200 dev paragraphs (SIB-200 rows)", flores_sets(args.sib200)),
                        ("Corpus dev paragraphs (held out from training)",
                         dev_sets(args.corpus))):
        results = Results()
        for lang, items in sets.items():
            for splitter in splitters:
                results.run(splitter, lang, items)
        output += table(results, names, title)
        print("\n".join(output[-len(sets) - 16:]), flush=True)
    if args.markdown:
        args.markdown.write_text("\n".join(output) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
