#!/usr/bin/env python3
"""How closely a distilled run's student follows its teacher on sentences of your choice.

    python tasks/teacher_fit.py WORK FILE [FILE ...] [--lang eng] [--threads 2]

WORK is the --work-dir of a `laser train --teacher` run: its checkpoint gives the student and its
projection head, its teacher cache the centring of the targets. Each FILE holds one sentence per
line in language --lang. Prints, per file, the mean cosine between each sentence's teacher target
and the student's embedding through the head (on the run's training sentences, one minus the
distillation loss of their English side without dropout), and its 10th and 50th percentiles.
The teacher runs on every sentence (the `train` extra).
"""
from __future__ import annotations

import argparse
import sys
from itertools import islice
from pathlib import Path
from typing import Iterator

import numpy as np

from laser.errors import LaserError
from laser.training.teacher_fit import TeacherFit

CHUNK = 2000


def sentence_chunks(path: Path) -> Iterator[list[str]]:
    """The file's lines in chunks; a blank line is an error naming it."""
    with open(path, encoding="utf-8") as lines:
        numbered = enumerate(lines, 1)
        while chunk := list(islice(numbered, CHUNK)):
            for number, line in chunk:
                if not line.strip():
                    raise LaserError(f"{path}:{number}: blank line; expected one sentence per line")
            yield [line.rstrip("\n") for _, line in chunk]


def file_cosines(fit: TeacherFit, path: Path, lang: str) -> np.ndarray:
    return np.concatenate([fit.cosines(chunk, lang) for chunk in sentence_chunks(path)]
                          or [np.zeros(0)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("work", type=Path)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--lang", default="eng", help="Language of the files' sentences.")
    parser.add_argument("--threads", type=int, default=2, help="The teacher's threads.")
    args = parser.parse_args()
    try:
        fit = TeacherFit(args.work, threads=args.threads)
        for index, path in enumerate(args.files):
            cosines = file_cosines(fit, path, args.lang)
            if not len(cosines):
                raise LaserError(f"{path}: no sentences")
            if index == 0:
                print("| file | sentences | mean cosine | 10th percentile | median |")
                print("|---|---:|---:|---:|---:|")
            print(f"| {path} | {len(cosines):,} | {cosines.mean():.3f} | "
                  f"{np.percentile(cosines, 10):.3f} | {np.median(cosines):.3f} |", flush=True)
    except (LaserError, OSError) as error:
        sys.exit(f"error: {error}")


if __name__ == "__main__":
    main()
