"""Per-file parity with the official LASER pipeline on a parity fixture folder (LASER1 or LASER2).

Prints a markdown table: lines whose preprocessing stages equal the official output byte for byte,
and the largest embedding difference. LASER1 folders are checked with both BPE backends.

    python bench/parity_report.py                                  # tests/data/parity (LASER1)
    python bench/parity_report.py --fixtures tests/data/parity2    # LASER2 (SentencePiece)
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

# The official files of each stage, and the encoders' names for the stages.
STAGES = {"laser1": (("tok", "bpe"), ("fastbpe", "python")), "laser2": (("pre", "spm"), ("auto",))}


def lines_of(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def language(stem: str) -> str:
    """The language each fixture input was processed as (edge* -> en, xx_yy -> yy)."""
    return "en" if stem in ("edge", "edge_spm") else stem.split("_")[-1]


def file_row(encoders: list[Encoder], fixtures: Path, stem: str) -> tuple[int, list[int], float]:
    """Lines, equal lines per stage (the second stage once per encoder), max embedding diff."""
    first, second = STAGES[encoders[0].family][0]
    lines, lang = lines_of(fixtures / "inputs" / f"{stem}.txt"), language(stem)
    expected = fixtures / "expected"
    tokenized = encoders[0].tokenize(lines, lang)
    equal = [sum(a == b for a, b in zip(tokenized, lines_of(expected / f"{stem}.{first}")))]
    equal += [sum(a == b for a, b in zip(encoder.apply_bpe(tokenized),
                                         lines_of(expected / f"{stem}.{second}")))
              for encoder in encoders]
    diff = float(np.abs(encoders[0].encode(lines, lang) - np.load(expected / f"{stem}.npy")).max())
    return len(lines), equal, diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=ROOT / "tests/data/parity")
    args = parser.parse_args()
    files = ModelFiles.from_dir(args.fixtures / "model")
    probe = Encoder(files)
    (first, second), backends = STAGES[probe.family]
    encoders = [probe] if backends == ("auto",) else [Encoder(files, bpe_backend=b)
                                                       for b in backends]
    print(f"| input | lang | lines | .{first} equal | .{second} equal ({' / '.join(backends)}) "
          "| max abs embedding diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    totals, worst = np.zeros(1 + 1 + len(encoders), dtype=int), 0.0
    for source in sorted((args.fixtures / "inputs").glob("*.txt")):
        n, equal, diff = file_row(encoders, args.fixtures, source.stem)
        totals += [n, *equal]
        worst = max(worst, diff)
        print(f"| {source.stem} | {language(source.stem)} | {n} | {equal[0]}/{n} | "
              + " / ".join(f"{count}/{n}" for count in equal[1:]) + f" | {diff:.1e} |")
    n, *equal = totals.tolist()
    print(f"| **all** | | {n} | {equal[0]}/{n} | " + " / ".join(f"{c}/{n}" for c in equal[1:])
          + f" | {worst:.1e} |")


if __name__ == "__main__":
    main()
