#!/usr/bin/env python3
"""The recipe of the shipped language-ID model (models/default/laser-lid.ftz): a fastText
classifier trained on the foreign side of every language of the corpus plus English.

    python tasks/lid_model.py CORPUS_DIR [--sib200 DIR] [--work build/lid] [--out FILE]
                              [--threads 2] [--seed 2] [--hold-out-sources] [--source-cap N]
                              [--extra LABELLED.tsv ...] [--pieces N]

CORPUS_DIR holds train/XXX-eng.tsv.gz and dev/XXX-eng.tsv.gz (`foreign<TAB>english`). Needs the
full `fasttext` package (`make lid-model` installs it in .venv-lid: the light install's
`fasttext-predict` provides the same module name, so the two never share an environment).

Data: each line is labelled with its FLORES-200 style code, ISO 639-3 + the script its letters
are in (laser.lid.scripts); a language written in a second script keeps those lines under a
label of their own when it has at least MIN_SCRIPT_LINES of them, else they are dropped. Train
lines are deduplicated per label; a train line equal (normalised) to any dev line, to any FLORES
dev row of SIB-200 (the bench's held-out sets), or to a line of another label is dropped. Each
label is sampled to between --floor and --cap lines (repeated below the floor; with
--balance-lengths a capped label keeps as many lines of long pairs as of short ones). Trained with
the one-vs-all loss (a sigmoid a label). Prints the macro accuracy on the corpus dev split and the
worst labels.

Each train pair's source family (Tatoeba, FLORES, NTREX, TICO-19, Wikipedia) is read from its
English side (laser.lid.corpus.SourceOf). --hold-out-sources leaves each language's held-out
family out of train (Tatoeba where it has another, else NTREX, else TICO-19): bench/lid.py scores
that model on those lines, out of source. --source-cap caps each family of a label; --extra adds
labelled text (tasks/lid_extra_text.py: wordfreq and CLDR), --pieces 1- to 3-word pieces of each
label's lines, both without held-out lines.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from laser.lid.corpus import (PIVOT, SourceOf, as_label_code, corpus_files, flores_dev_rows,
                              label_of, pairs, piece_of)
from laser.lid.model import LABEL_PREFIX

MIN_SCRIPT_LINES = 100
# A pair whose English side has at least this many characters is taken for news or Wikipedia
# (FLORES-200, NTREX, TICO-19) rather than a Tatoeba-style sentence.
LONG_ENGLISH = 70
NOT_KEY = re.compile(r"[\W\d_]+")
Line = tuple[str, str]  # a train line and its source family (laser.lid.corpus.SourceOf)


def key(line: str) -> str:
    """The line as compared for duplicates and overlaps: NFKC, lowercase, letters only."""
    return NOT_KEY.sub("", unicodedata.normalize("NFKC", line).lower())


def read_split(corpus: Path, split: str, source_of: SourceOf,
               hold_out: bool = False) -> tuple[dict[str, list[Line]], set[str], set[str]]:
    """Label -> (line, source family) of a split (every foreign side, and the English side of
    every file), the keys of the lines of long pairs (`LONG_ENGLISH`), and with `hold_out` the
    keys of the foreign sides of each language's held-out family, which are left out."""
    by_label: dict[str, list[Line]] = defaultdict(list)
    long_keys: set[str] = set()
    held: set[str] = set()
    for path in corpus_files(corpus, split):
        for foreign, english in pairs(path):
            family, code = source_of.origin(path, english)
            held_pair = hold_out and family == source_of.held_out(code)
            for language, line in ((as_label_code(code), foreign), (PIVOT, english)):
                if language != PIVOT and held_pair:
                    held.add(key(line))
                    continue
                label = label_of(language, line) if line else None
                if label:
                    by_label[label].append((line, family))
                    if len(english) >= LONG_ENGLISH:
                        long_keys.add(key(line))
    return by_label, long_keys, held


def held_out_keys(dev: dict[str, list[Line]], sib200: Path | None) -> set[str]:
    """The keys of the dev lines and of SIB-200's FLORES dev rows."""
    keys = {key(line) for lines in dev.values() for line, _ in lines}
    if sib200:
        keys.update(key(text) for texts in flores_dev_rows(sib200).values() for text in texts)
    return keys


def clean_train(train: dict[str, list[Line]], held_out: set[str]) -> dict[str, list[Line]]:
    """Dedup per label; drop held-out lines, rare secondary scripts, and lines shared by labels
    (unless that leaves a label without lines: Kapampangan's are all Pampanga's too)."""
    labels_of_key: dict[str, set[str]] = defaultdict(set)
    for label, lines in train.items():
        for line, _ in lines:
            labels_of_key[key(line)].add(label)
    cleaned = {}
    for label, lines in train.items():
        unique = deduplicated(lines, held_out)
        cleaned[label] = [row for row in unique if len(labels_of_key[key(row[0])]) == 1] or unique
    return keep_main_scripts(cleaned)


def deduplicated(lines: list[Line], held_out: set[str]) -> list[Line]:
    """The first of each distinct line (by `key`), held-out lines and lines without letters left
    out."""
    seen: set[str] = set()
    kept = []
    for line, family in lines:
        k = key(line)
        if k and k not in seen and k not in held_out:
            seen.add(k)
            kept.append((line, family))
    return kept


def keep_main_scripts(by_label: dict[str, list[Line]]) -> dict[str, list[Line]]:
    """Each language's largest script, and its others with at least MIN_SCRIPT_LINES lines."""
    largest: dict[str, int] = Counter()
    for label, lines in by_label.items():
        language = label.split("_")[0]
        largest[language] = max(largest[language], len(lines))
    return {label: lines for label, lines in by_label.items() if lines and (
        len(lines) >= MIN_SCRIPT_LINES or len(lines) == largest[label.split("_")[0]])}


def sampled(rows: list[Line], options: argparse.Namespace, long_keys: set[str],
            rng: random.Random) -> list[str]:
    """A label's lines, each source family first cut to `--source-cap`; then cut to `--cap` at
    random (with `--balance-lengths`, half long and half short lines where there are enough of
    each), or repeated (then topped up at random) up to `--floor`."""
    lines = capped_by_family(rows, options.source_cap, rng)
    cap, floor = options.cap, options.floor
    if len(lines) >= cap and not options.balance_lengths:
        return rng.sample(lines, cap)
    if len(lines) >= cap:
        long = [line for line in lines if key(line) in long_keys]
        short = [line for line in lines if key(line) not in long_keys]
        keep_long = min(len(long), max(cap // 2, cap - len(short)))
        return rng.sample(long, keep_long) + rng.sample(short, cap - keep_long)
    if len(lines) >= floor:
        return list(lines)
    repeats, rest = divmod(floor, len(lines))
    return lines * repeats + rng.sample(lines, rest)


def capped_by_family(rows: list[Line], source_cap: int, rng: random.Random) -> list[str]:
    """The lines of `rows`, at most `source_cap` of each source family (0: all)."""
    if not source_cap:
        return [line for line, _ in rows]
    by_family: dict[str, list[str]] = defaultdict(list)
    for line, family in rows:
        by_family[family].append(line)
    return [line for family in sorted(by_family) for line in (
        by_family[family] if len(by_family[family]) <= source_cap
        else rng.sample(by_family[family], source_cap))]


def extra_rows(files: list[Path], labels: set[str], held_out: set[str], cap: int,
               rng: random.Random) -> list[tuple[str, str]]:
    """(label, line) of `files` (LABEL<TAB>LINE), labels of the model only, held-out lines left
    out, at most `cap` a label drawn at random."""
    by_label: dict[str, list[str]] = defaultdict(list)
    for path in files:
        with path.open(encoding="utf-8") as lines:
            for row in lines:
                label, _, line = row.rstrip("\n").partition("\t")
                if label in labels and line and key(line) not in held_out:
                    by_label[label].append(line)
    return [(label, line) for label in sorted(by_label)
            for line in rng.sample(by_label[label], min(cap, len(by_label[label])))]


def piece_rows(train: dict[str, list[Line]], count: int, held_out: set[str],
               rng: random.Random) -> list[tuple[str, str]]:
    """(label, piece): `count` pieces of 1 to 3 words (laser.lid.corpus.piece_of) of each label's
    lines drawn at random, held-out keys and keys found under two labels left out."""
    drawn = {label: [piece_of(rng.choice(rows)[0], rng) for _ in range(count)]
             for label, rows in sorted(train.items())}
    labels_of_key: dict[str, set[str]] = defaultdict(set)
    for label, pieces in drawn.items():
        for piece in pieces:
            labels_of_key[key(piece)].add(label)
    return [(label, piece) for label, pieces in drawn.items() for piece in pieces
            if piece and key(piece) not in held_out and len(labels_of_key[key(piece)]) == 1]


def write_fasttext(path: Path, rows: list[tuple[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for label, line in rows:
            out.write(f"{LABEL_PREFIX}{label} {line}\n")


def macro_report(model, dev: dict[str, list[str]], worst: int = 25) -> float:
    """Macro accuracy over the dev labels; prints the worst and what they were taken for."""
    accuracies = {}
    confusions: dict[str, Counter] = {}
    for label, lines in sorted(dev.items()):
        predicted, _ = model.predict(lines)
        guesses = Counter(p[0][len(LABEL_PREFIX):] for p in predicted)
        accuracies[label] = guesses[label] / len(lines)
        del guesses[label]
        confusions[label] = guesses
    macro = sum(accuracies.values()) / len(accuracies)
    for label in sorted(accuracies, key=accuracies.get)[:worst]:
        top = ", ".join(f"{other} {count}" for other, count in confusions[label].most_common(3))
        print(f"  {label} {accuracies[label]:.3f} ({len(dev[label])}): {top}", file=sys.stderr)
    print(f"macro accuracy over {len(accuracies)} dev labels: {macro:.4f}", file=sys.stderr)
    return macro


def prepared(corpus: Path, sib200: Path | None, cache: Path, hold_out: bool):
    """(dev lines, cleaned train (line, family) rows) by label, the keys of long lines and those
    of every held-out line, read from `cache` when an earlier run wrote it. With `hold_out`, each
    language's held-out source family (`SourceOf.held_out`) is left out of train."""
    if cache.exists():
        with gzip.open(cache, "rt", encoding="utf-8") as data:
            dev, train, long_keys, held = json.load(data)
            train = {label: [tuple(row) for row in rows] for label, rows in train.items()}
            return dev, train, set(long_keys), set(held)
    source_of = SourceOf(corpus)
    dev, _, _ = read_split(corpus, "dev", source_of)
    train, long_keys, held = read_split(corpus, "train", source_of, hold_out)
    held |= held_out_keys(dev, sib200)
    train = clean_train(train, held)
    dev = {label: [line for line, _ in lines] for label, lines in dev.items() if label in train}
    with gzip.open(cache, "wt", encoding="utf-8") as data:
        json.dump([dev, train, sorted(long_keys), sorted(held)], data, ensure_ascii=False)
    return dev, train, long_keys, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--sib200", type=Path, help="SIB-200 folder: its FLORES dev rows stay out")
    parser.add_argument("--work", type=Path, default=Path("build/lid"))
    parser.add_argument("--out", type=Path, default=Path("models/default/laser-lid.ftz"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--floor", type=int, default=1500)
    parser.add_argument("--cap", type=int, default=6000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--epoch", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.8)
    parser.add_argument("--minn", type=int, default=2)
    parser.add_argument("--maxn", type=int, default=4)
    parser.add_argument("--word-ngrams", type=int, default=2)
    parser.add_argument("--bucket", type=int, default=1_000_000)
    parser.add_argument("--cutoff", type=int, default=100_000, help="rows kept by quantization")
    parser.add_argument("--dsub", type=int, default=2)
    parser.add_argument("--loss", choices=("softmax", "hs", "ova"), default="ova",
                        help="hs (hierarchical softmax): faster prediction over many labels; "
                        "ova (one-vs-all): a sigmoid a label, probabilities that need not sum to 1")
    parser.add_argument("--no-quantize", action="store_true")
    parser.add_argument("--balance-lengths", action="store_true",
                        help="a label cut to --cap keeps as many long lines as short ones")
    parser.add_argument("--source-cap", type=int, default=0,
                        help="at most this many lines of a label from one source family (0: all)")
    parser.add_argument("--hold-out-sources", action="store_true",
                        help="leave each language's held-out source family out of train (the "
                        "model that bench/lid.py --held-out-model scores out of source)")
    parser.add_argument("--extra", type=Path, action="append", default=[],
                        help="more training text: LABEL<TAB>LINE a line (tasks/lid_extra_text.py)")
    parser.add_argument("--extra-cap", type=int, default=3000,
                        help="at most this many --extra lines a label")
    parser.add_argument("--pieces", type=int, default=1500,
                        help="this many pieces of 1 to 3 words of a label's lines added to it")
    args = parser.parse_args()
    import fasttext  # the full package (training): not a dependency of laser itself

    started = time.time()
    args.work.mkdir(parents=True, exist_ok=True)
    cache = args.work / ("data-held-out.json.gz" if args.hold_out_sources else "data-v2.json.gz")
    dev, train, long_keys, held = prepared(args.corpus, args.sib200, cache, args.hold_out_sources)
    rng = random.Random(args.seed)
    rows = [(label, line) for label in sorted(train)
            for line in sampled(train[label], args, long_keys, rng)]
    rows += extra_rows(args.extra, set(train), held, args.extra_cap, rng)
    rows += piece_rows(train, args.pieces, held, rng) if args.pieces else []
    rng.shuffle(rows)
    train_file = args.work / f"{args.out.stem}.train.txt"
    write_fasttext(train_file, rows)
    print(f"{len(train)} labels, {len(rows)} training lines ({time.time() - started:.0f}s)",
          file=sys.stderr)
    model = fasttext.train_supervised(
        str(train_file), dim=args.dim, epoch=args.epoch, lr=args.lr, minn=args.minn,
        maxn=args.maxn, wordNgrams=args.word_ngrams, bucket=args.bucket, thread=args.threads,
        loss=args.loss, seed=args.seed, verbose=0)
    print(f"trained ({time.time() - started:.0f}s)", file=sys.stderr)
    macro_report(model, dev)
    if not args.no_quantize:
        model.quantize(input=str(train_file), qnorm=True, retrain=True, cutoff=args.cutoff,
                       dsub=args.dsub, thread=args.threads, epoch=1, lr=args.lr / 4, verbose=0)
        print(f"quantized ({time.time() - started:.0f}s)", file=sys.stderr)
        macro_report(model, dev)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save_model(str(args.out))
    print(f"{args.out}: {args.out.stat().st_size} bytes ({time.time() - started:.0f}s)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
