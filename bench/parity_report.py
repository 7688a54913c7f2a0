"""Per-file parity with the official LASER pipeline on a parity fixture folder (LASER1, 2 or 3).

Prints a markdown table: lines whose preprocessing stages equal the official output byte for byte
(`n/a` where the folder has no official file for a stage), and the largest embedding difference.
LASER1 folders are checked with both BPE backends. A folder whose `model/` holds one model
directory per checkpoint (LASER3: `model/A`, ... with `expected/A/*.npy`, ...) gets one
difference column per checkpoint.

    python bench/parity_report.py                                  # tests/data/parity (LASER1)
    python bench/parity_report.py --fixtures tests/data/parity2    # LASER2 (SentencePiece)
    python bench/parity_report.py --fixtures tests/data/parity3    # LASER3 (transformers A, B, C)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.encoder import Encoder  # noqa: E402
from laser.models.files import ModelFiles  # noqa: E402

# The official files of each stage, and the encoders' names for the stages.
STAGES = {"laser1": (("tok", "bpe"), ("fastbpe", "python")), "laser2": (("pre", "spm"), ("auto",)),
          "laser3": (("pre", "spm"), ("auto",))}


def lines_of(path: Path) -> Optional[list[str]]:
    """The lines of `path` split on '\\n' only; None when there is no such file."""
    if not path.exists():
        return None
    lines = path.read_bytes().decode("utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def language(stem: str) -> str:
    """The language each fixture input was processed as (edge* -> en, xx_yy -> yy)."""
    return "en" if stem in ("edge", "edge_spm") else stem.split("_")[-1]


def equal_lines(got: list[str], expected: Optional[list[str]]) -> Optional[int]:
    return None if expected is None else sum(a == b for a, b in zip(got, expected))


def stage_counts(encoders: list[Encoder], fixtures: Path, stem: str) -> list[Optional[int]]:
    """Lines equal to the official first stage, then to the second stage once per encoder."""
    first, second = STAGES[encoders[0].family][0]
    lines, lang = lines_of(fixtures / "inputs" / f"{stem}.txt"), language(stem)
    expected = fixtures / "expected"
    tokenized = encoders[0].tokenize(lines, lang)
    return [equal_lines(tokenized, lines_of(expected / f"{stem}.{first}"))] + [
        equal_lines(encoder.apply_bpe(tokenized), lines_of(expected / f"{stem}.{second}"))
        for encoder in encoders]


def max_diff(encoder: Encoder, fixtures: Path, expected: Path, stem: str) -> float:
    lines = lines_of(fixtures / "inputs" / f"{stem}.txt")
    return float(np.abs(encoder.encode(lines, language(stem)) - np.load(expected / f"{stem}.npy"))
                 .max())


def checkpoints(fixtures: Path) -> dict[str, Path]:
    """Model directory of each checkpoint: `model/` itself, or each folder in it by name."""
    model = fixtures / "model"
    folders = sorted(path for path in model.iterdir() if path.is_dir())
    return {path.name: path for path in folders} if folders else {"": model}


def fraction(count: Optional[int], total: int) -> str:
    return "n/a" if count is None else f"{count}/{total}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=ROOT / "tests/data/parity")
    args = parser.parse_args()
    models = {name: Encoder(ModelFiles.from_dir(path)) for name, path in checkpoints(args.fixtures)
              .items()}
    probe = next(iter(models.values()))
    (first, second), backends = STAGES[probe.family]
    encoders = [probe] if backends == ("auto",) else [Encoder(probe.files, bpe_backend=b)
                                                       for b in backends]
    diffs = " | ".join(f"max abs diff {name}" for name in models) if len(models) > 1 \
        else "max abs embedding diff"
    print(f"| input | lang | lines | .{first} equal | .{second} equal ({' / '.join(backends)}) "
          f"| {diffs} |")
    print("| --- | --- | ---: | ---: | ---: |" + " ---: |" * len(models))
    total, counts, worst = 0, [0] * (1 + len(encoders)), dict.fromkeys(models, 0.0)
    for source in sorted((args.fixtures / "inputs").glob("*.txt")):
        stem = source.stem
        n, equal = len(lines_of(source)), stage_counts(encoders, args.fixtures, stem)
        row = {name: max_diff(encoder, args.fixtures, args.fixtures / "expected" / name, stem)
               for name, encoder in models.items()}
        total += n
        counts = [None if c is None or e is None else c + e for c, e in zip(counts, equal)]
        worst = {name: max(worst[name], row[name]) for name in models}
        print(f"| {stem} | {language(stem)} | {n} | {fraction(equal[0], n)} | "
              + " / ".join(fraction(count, n) for count in equal[1:]) + " | "
              + " | ".join(f"{row[name]:.1e}" for name in models) + " |")
    print(f"| **all** | | {total} | {fraction(counts[0], total)} | "
          + " / ".join(fraction(c, total) for c in counts[1:]) + " | "
          + " | ".join(f"{worst[name]:.1e}" for name in models) + " |")


if __name__ == "__main__":
    main()
