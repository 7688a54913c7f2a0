#!/usr/bin/env python3
"""What `--quantize int8` costs in quality: dev xsim and cosine to float32, per language.

For each XXX-eng pair file of DEV_DIR (the dev split, or tests/data/corpus/dev) both sides are
preprocessed once and embedded by the model in float32 and in int8; printed per language: the
xsim error (xx->en and en->xx averaged, as tasks/corpus_xsim.py counts it) of each, and the
median and minimum cosine between a sentence's int8 and float32 vectors, then the averages.

    python bench/quantize_quality.py ../shared/data/corpus/dev [--languages fra,deu] [--pairs 1000]
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from laser.eval.xsim import xsim_errors  # noqa: E402
from laser.encoder import Encoder  # noqa: E402
from laser.search.vectors import Vectors  # noqa: E402
from laser.training.corpus import find_pair_files, read_pairs  # noqa: E402

# The 20 languages with the most training pairs of the shipped model (docs/default-model.md).
TOP20 = ("fra,deu,jpn,cmn,rus,spa,por,ita,epo,tur,ces,hun,ukr,nld,mar,ara,heb,mkd,fin,dan")


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def xsim(foreign: np.ndarray, english: np.ndarray, texts: tuple[list, list]) -> float:
    """xx->en and en->xx error averaged, duplicates of the reference text counted as found."""
    x, y = Vectors(foreign, "xx"), Vectors(english, "eng")
    forward, backward = xsim_errors(x, y, x_texts=texts[0], y_texts=texts[1])
    return (forward + backward) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev_dir", type=Path)
    parser.add_argument("--model", help="Model directory (default: the shipped model).")
    parser.add_argument("--languages", default=TOP20, help="ISO 639-3 codes, comma-separated")
    parser.add_argument("--pairs", type=int, default=1000, help="first N pairs of each file")
    args = parser.parse_args()
    encoders = {"fp32": Encoder.load(args.model), "int8": Encoder.load(args.model, quantize="int8")}
    prepare = encoders["fp32"].prepare
    print("| lang | pairs | xsim fp32 % | xsim int8 % | change (points) | median cosine "
          "| min cosine |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for pair_file in find_pair_files(args.dev_dir, args.languages.split(",")):
        texts = tuple(map(list, zip(*itertools.islice(read_pairs(pair_file.path), args.pairs))))
        ids = (prepare(texts[0], pair_file.lang), prepare(texts[1], "en"))
        vectors = {name: [encoder.encode_ids(side) for side in ids]
                   for name, encoder in encoders.items()}
        errors = {name: 100 * xsim(*sides, texts) for name, sides in vectors.items()}
        similarity = np.concatenate([cosines(a, b) for a, b in zip(*vectors.values())])
        row = (errors["fp32"], errors["int8"], errors["int8"] - errors["fp32"],
               float(np.median(similarity)), float(similarity.min()))
        rows.append(row)
        print(f"| {pair_file.lang} | {len(texts[0])} | {row[0]:.2f} | {row[1]:.2f} | {row[2]:+.2f} "
              f"| {row[3]:.4f} | {row[4]:.4f} |", flush=True)
    mean = np.mean(rows, axis=0)
    print(f"| mean of {len(rows)} | | {mean[0]:.2f} | {mean[1]:.2f} | {mean[2]:+.2f} "
          f"| {mean[3]:.4f} | {min(r[4] for r in rows):.4f} |")


if __name__ == "__main__":
    main()
