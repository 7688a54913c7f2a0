"""Per-language parity with the official LASER pipeline on the fixtures in ../shared.

Prints a markdown table: lines whose tokenisation and BPE equal the official output byte for byte,
and the largest embedding difference, per input file and BPE backend.

    python bench/parity_report.py [--fixtures ../shared/fixtures/parity/public]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.models.encoder import Encoder  # noqa: E402
from laser.models.files import ModelFiles  # noqa: E402


def lines_of(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path,
                        default=ROOT.parent / "shared/fixtures/parity/public")
    args = parser.parse_args()
    files = ModelFiles.from_dir(args.fixtures / "model")
    encoders = {backend: Encoder(files, bpe_backend=backend) for backend in ("fastbpe", "python")}
    print("| input | lang | lines | .tok equal | .bpe equal (fastBPE / Python) | max abs embedding diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    totals = np.zeros(4, dtype=int)
    for source in sorted((args.fixtures / "inputs").glob("*.txt")):
        stem = source.stem
        lang = "en" if stem == "edge" else stem.split("_")[-1]
        lines = lines_of(source)
        expected_tok = lines_of(args.fixtures / "expected" / f"{stem}.tok")
        expected_bpe = lines_of(args.fixtures / "expected" / f"{stem}.bpe")
        tok = encoders["fastbpe"].tokenize(lines, lang)
        same_tok = sum(a == b for a, b in zip(tok, expected_tok))
        same_bpe = [sum(a == b for a, b in zip(encoder.apply_bpe(tok), expected_bpe))
                    for encoder in encoders.values()]
        got = encoders["fastbpe"].encode(lines, lang)
        diff = float(np.abs(got - np.load(args.fixtures / "expected" / f"{stem}.npy")).max())
        totals += [len(lines), same_tok, *same_bpe]
        print(f"| {stem} | {lang} | {len(lines)} | {same_tok}/{len(lines)} | "
              f"{same_bpe[0]}/{len(lines)} / {same_bpe[1]}/{len(lines)} | {diff:.1e} |")
    n, tok, fast, python = totals
    print(f"| **all** | | {n} | {tok}/{n} ({tok / n:.1%}) | {fast}/{n} / {python}/{n} | |")


if __name__ == "__main__":
    main()
