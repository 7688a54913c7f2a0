"""Single-thread embedding throughput of model directories on one input, in process CPU time.

CPU time rather than wall time, so that numbers from a shared, loaded machine still compare
models with each other. Prints the network alone (pieces already made) and the whole `encode`.

    python bench/model_speed.py tests/data/parity3/model/A tests/data/parity2/model \\
        --input tests/data/parity3/inputs/batching_fr.txt --lang fr
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.encoder import Encoder  # noqa: E402


def best_cpu_seconds(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def main() -> None:
    import torch
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--lang", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    lines = args.input.read_text(encoding="utf-8").splitlines()
    print("| model | generation | network (sentences/s) | preprocessing + network (sentences/s) |")
    print("| --- | --- | ---: | ---: |")
    for directory in args.models:
        encoder = Encoder.load(str(directory))
        pieces = encoder.preprocessor(lines, args.lang)
        network = best_cpu_seconds(lambda: encoder.encode_bpe(pieces), args.repeats)
        whole = best_cpu_seconds(lambda: encoder.encode(lines, args.lang), args.repeats)
        print(f"| {directory} | {encoder.family} | {len(lines) / network:,.0f} | "
              f"{len(lines) / whole:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
