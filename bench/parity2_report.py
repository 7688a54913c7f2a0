"""LASER2 (SentencePiece) parity with the official SPMApply + SentenceEncoder, per input file.

Prints a markdown table: lines whose pre-SentencePiece text and pieces equal the official output
byte for byte, and the largest embedding difference.

    python bench/parity2_report.py [--fixtures tests/data/parity2]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.models.encoder import Encoder  # noqa: E402


def lines_of(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=ROOT / "tests/data/parity2")
    args = parser.parse_args()
    encoder = Encoder.load(str(args.fixtures / "model"))
    expected = args.fixtures / "expected"
    print("| input | lang | lines | .pre equal | .spm equal | max abs embedding diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    totals, worst = np.zeros(3, dtype=int), 0.0
    for source in sorted((args.fixtures / "inputs").glob("*.txt")):
        stem = source.stem
        lang = "en" if stem in ("edge", "edge_spm") else stem.split("_")[-1]
        lines = lines_of(source)
        pre = encoder.tokenize(lines, lang)
        same_pre = sum(a == b for a, b in zip(pre, lines_of(expected / f"{stem}.pre")))
        same_spm = sum(a == b for a, b in zip(encoder.segment(pre),
                                              lines_of(expected / f"{stem}.spm")))
        diff = float(np.abs(encoder.encode(lines, lang) - np.load(expected / f"{stem}.npy")).max())
        totals += [len(lines), same_pre, same_spm]
        worst = max(worst, diff)
        print(f"| {stem} | {lang} | {len(lines)} | {same_pre}/{len(lines)} | "
              f"{same_spm}/{len(lines)} | {diff:.1e} |")
    n, pre, spm = totals
    print(f"| **all** | | {n} | {pre}/{n} | {spm}/{n} | {worst:.1e} |")


if __name__ == "__main__":
    main()
