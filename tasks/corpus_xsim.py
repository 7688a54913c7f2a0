#!/usr/bin/env python3
"""Similarity search error of a model on a folder of XXX-eng.tsv(.gz) pair files (e.g. the dev split).

    python tasks/corpus_xsim.py DEV_DIR [--model M] [--train-dir TRAIN_DIR] [--top 20] [--quantize int8]
                                 [--languages fra,deu,...] [--teacher use] [--baseline B]
                                 [--markdown OUT]

Every pair file is run through the full inference pipeline (`Encoder.encode`, raw text in), then
cosine xsim both ways: xx->en searches each foreign sentence among the file's English sentences,
en->xx the reverse; a retrieved sentence whose text equals the reference counts as found. With
--train-dir the table is ordered by training pairs and the average over the --top languages with
the most training pairs is reported (the headline figure of docs/default-model.md).

--teacher scores a distillation teacher of `laser train` (the `train` extra) instead of a model,
on the languages it was trained for (or --languages): the ceiling distillation aims at.

--baseline B (a model directory or name, e.g. `default`) scores B on the same files and compares
per language (both directions' queries together): the change in points, the exact McNemar
p-value of the queries only one model gets right, and the languages more than --worse points
worse (the "no language more than 2 points worse" check of a new default model), with how many
of them are significant, since a dev file of 100 pairs moves by a point for two sentences.
"""
from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path
from statistics import mean

import numpy as np

from laser.encoder import Encoder
from laser.eval.paired import PairedComparison
from laser.eval.xsim import xsim_misses
from laser.search.vectors import Vectors
from laser.training.corpus import find_pair_files, read_pairs
from laser.training.teachers import TeacherEncoder, make_teacher


def count_lines(path: Path) -> int:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return sum(1 for _ in f)


def language_misses(encoder: Encoder | TeacherEncoder, path: Path,
                    lang: str) -> tuple[np.ndarray, np.ndarray]:
    """Which xx->en and which en->xx queries of a pair file `encoder` gets wrong."""
    foreign, english = map(list, zip(*read_pairs(path)))
    x = Vectors(encoder.encode(foreign, lang), f"{lang} dev")
    y = Vectors(encoder.encode(english, "en"), "eng dev")
    return xsim_misses(x, y, x_texts=foreign, y_texts=english)


def markdown(rows: list[tuple], top: int, seconds: float, sentences: int) -> str:
    lines = ["| lang | train pairs | dev pairs | xx->en error % | en->xx error % |",
             "|---|---:|---:|---:|---:|"]
    for lang, train, dev, fwd, bwd in rows:
        lines.append(f"| {lang} | {train if train is not None else '-'} | {dev} | "
                     f"{100 * fwd:.2f} | {100 * bwd:.2f} |")
    head = rows[:top]
    summary = [f"Average over the {len(head)} languages with the most training pairs: "
               f"xx->en {100 * np.mean([r[3] for r in head]):.2f}%, "
               f"en->xx {100 * np.mean([r[4] for r in head]):.2f}%, "
               f"both {100 * np.mean([(r[3] + r[4]) / 2 for r in head]):.2f}%.",
               f"Average over all {len(rows)} languages: "
               f"{100 * np.mean([(r[3] + r[4]) / 2 for r in rows]):.2f}%.",
               f"Embedded {sentences} sentences in {seconds:.0f} s "
               f"({sentences / seconds:.0f} sentences/s, full pipeline, this machine)."]
    return "\n".join(summary) + "\n\n" + "\n".join(lines) + "\n"


def comparison_markdown(rows: list[tuple], baseline: dict[str, PairedComparison], top: int,
                        worse: float) -> str:
    """Per language, the baseline's error next to the model's (both directions), the change and
    its McNemar p-value; then the averages and the languages more than `worse` points worse."""
    lines = ["| lang | train pairs | dev pairs | baseline % | model % | change (points) | p |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for lang, train, dev, _, _ in rows:
        pair = baseline[lang]
        lines.append(f"| {lang} | {train if train is not None else '-'} | {dev} | "
                     f"{pair.baseline_error:.2f} | {pair.model_error:.2f} | {pair.change:+.2f} | "
                     f"{pair.p_value:.3g} |")
    pairs = [baseline[row[0]] for row in rows]
    regressed = sorted(((row[0], row[2], pair) for row, pair in zip(rows, pairs)
                        if pair.change > worse), key=lambda item: -item[2].change)
    listed = ", ".join(f"{lang} {pair.change:+.1f} ({dev} pairs, p {pair.p_value:.2g})"
                       for lang, dev, pair in regressed)
    summary = [
        f"Against the baseline, both directions: top {min(top, len(rows))} "
        f"{mean(p.baseline_error for p in pairs[:top]):.2f}% -> "
        f"{mean(p.model_error for p in pairs[:top]):.2f}%, "
        f"all {len(rows)} {mean(p.baseline_error for p in pairs):.2f}% -> "
        f"{mean(p.model_error for p in pairs):.2f}%.",
        f"{count(pairs, lambda p: p.change < 0)} languages better "
        f"({count(pairs, lambda p: p.change < 0 and p.p_value < 0.05)} at p < 0.05), "
        f"{count(pairs, lambda p: p.change > 0)} worse "
        f"({count(pairs, lambda p: p.change > 0 and p.p_value < 0.05)} at p < 0.05).",
        f"More than {worse:g} points worse: {len(regressed)} "
        f"({count([p for _, _, p in regressed], lambda p: p.p_value < 0.05)} at p < 0.05)"
        + (f": {listed}." if regressed else "."),
    ]
    return "\n".join(summary) + "\n\n" + "\n".join(lines) + "\n"


def count(pairs: list[PairedComparison], condition) -> int:
    return sum(1 for pair in pairs if condition(pair))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev_dir", type=Path)
    parser.add_argument("--model", help="Model directory (default: the shipped model).")
    parser.add_argument("--train-dir", type=Path, help="Training pair files, for the counts.")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--quantize", choices=["int8"], help="Run the encoder in int8 (CPU).")
    parser.add_argument("--languages", help="Only these languages (comma-separated codes).")
    parser.add_argument("--teacher", help="Score this `laser train --teacher` instead of a model.")
    parser.add_argument("--baseline", help="Compare with this model (directory or name).")
    parser.add_argument("--worse", type=float, default=2.0,
                        help="With --baseline: list languages more than this many points worse.")
    parser.add_argument("--markdown", type=Path, help="Write the table here.")
    args = parser.parse_args()
    languages = set(args.languages.split(",")) if args.languages else None
    if args.teacher:
        teacher = make_teacher(args.teacher, threads=2)
        encoder = TeacherEncoder(teacher)
        languages = languages or set(getattr(teacher, "languages", ()))
    else:
        encoder = Encoder.load(args.model, quantize=args.quantize)
    train_sizes = ({pf.lang: count_lines(pf.path) for pf in find_pair_files(args.train_dir)}
                   if args.train_dir else {})
    baseline = Encoder.load(args.baseline) if args.baseline else None
    rows, compared, started, sentences = [], {}, time.perf_counter(), 0
    for pair_file in find_pair_files(args.dev_dir):
        if languages and pair_file.lang not in languages:
            continue
        fwd, bwd = language_misses(encoder, pair_file.path, pair_file.lang)
        sentences += 2 * len(fwd)
        rows.append((pair_file.lang, train_sizes.get(pair_file.lang), len(fwd), fwd.mean(),
                     bwd.mean()))
        print(f"{pair_file.lang}\t{len(fwd)}\t{100 * fwd.mean():.2f}\t{100 * bwd.mean():.2f}",
              file=sys.stderr)
        if baseline is not None:
            compared[pair_file.lang] = PairedComparison.of(
                np.concatenate(language_misses(baseline, pair_file.path, pair_file.lang)),
                np.concatenate([fwd, bwd]))
            sentences += 2 * len(fwd)
    rows.sort(key=lambda r: (-(r[1] or 0), r[0]))
    table = markdown(rows, args.top, time.perf_counter() - started, sentences)
    if baseline is not None:
        table += "\n" + comparison_markdown(rows, compared, args.top, args.worse)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
