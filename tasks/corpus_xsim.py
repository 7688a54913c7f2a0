#!/usr/bin/env python3
"""Similarity search error of a model on a folder of XXX-eng.tsv(.gz) pair files (e.g. the dev split).

    python tasks/corpus_xsim.py DEV_DIR [--model M] [--train-dir TRAIN_DIR] [--top 20] [--quantize int8]
                                 [--languages fra,deu,...] [--teacher use] [--markdown OUT]

Every pair file is run through the full inference pipeline (`Encoder.encode`, raw text in), then
cosine xsim both ways: xx->en searches each foreign sentence among the file's English sentences,
en->xx the reverse; a retrieved sentence whose text equals the reference counts as found. With
--train-dir the table is ordered by training pairs and the average over the --top languages with
the most training pairs is reported (the headline figure of docs/default-model.md).

--teacher scores a distillation teacher of `laser train` (the `train` extra) instead of a model,
on the languages it was trained for (or --languages): the ceiling distillation aims at.
"""
from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

import numpy as np

from laser.models.encoder import Encoder
from laser.eval.xsim import xsim_errors
from laser.search.vectors import Vectors
from laser.training.corpus import find_pair_files, read_pairs
from laser.training.teachers import Teacher, make_teacher


class TeacherEncoder:
    """A distillation teacher called like an `Encoder`: it reads raw text of any language."""

    def __init__(self, teacher: Teacher):
        self.teacher = teacher

    def encode(self, lines: list[str], lang: str) -> np.ndarray:
        return self.teacher.encode(list(lines))


def count_lines(path: Path) -> int:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return sum(1 for _ in f)


def language_errors(encoder: Encoder | TeacherEncoder, path: Path,
                    lang: str) -> tuple[int, float, float]:
    foreign, english = map(list, zip(*read_pairs(path)))
    x = Vectors(encoder.encode(foreign, lang), f"{lang} dev")
    y = Vectors(encoder.encode(english, "en"), "eng dev")
    return (len(foreign), *xsim_errors(x, y, x_texts=foreign, y_texts=english))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev_dir", type=Path)
    parser.add_argument("--model", help="Model directory (default: the shipped model).")
    parser.add_argument("--train-dir", type=Path, help="Training pair files, for the counts.")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--quantize", choices=["int8"], help="Run the encoder in int8 (CPU).")
    parser.add_argument("--languages", help="Only these languages (comma-separated codes).")
    parser.add_argument("--teacher", help="Score this `laser train --teacher` instead of a model.")
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
    rows, started, sentences = [], time.perf_counter(), 0
    for pair_file in find_pair_files(args.dev_dir):
        if languages and pair_file.lang not in languages:
            continue
        dev, fwd, bwd = language_errors(encoder, pair_file.path, pair_file.lang)
        sentences += 2 * dev
        rows.append((pair_file.lang, train_sizes.get(pair_file.lang), dev, fwd, bwd))
        print(f"{pair_file.lang}\t{dev}\t{100 * fwd:.2f}\t{100 * bwd:.2f}", file=sys.stderr)
    rows.sort(key=lambda r: (-(r[1] or 0), r[0]))
    table = markdown(rows, args.top, time.perf_counter() - started, sentences)
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
