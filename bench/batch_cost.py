#!/usr/bin/env python3
"""What one ONNX Runtime batch costs, by its rows and time steps: the constants of
`laser.runtime.sequences.batch_cost`, which `laser serve` uses to choose its batches.

Times `Encoder.encode_batch` (one batch, one thread) on batches of B sentences of T tokens for the
shipped default model, best of --repeats, and fits seconds = c * T * (B + STEP) + c * BATCH by
least squares on relative error: STEP is what each time step costs beyond its rows, in rows,
and BATCH what each batch costs beyond its steps, in tokens.

    python bench/batch_cost.py [--repeats 15]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from laser import Encoder  # noqa: E402
from laser.runtime.sequences import BATCH_COST_TOKENS, STEP_COST_ROWS  # noqa: E402

ROWS = (1, 2, 4, 8, 16, 24, 32, 48)
STEPS = (4, 8, 12, 16, 24, 32)
MOST_TOKENS = 1000


def best_seconds(encoder: Encoder, rows: int, steps: int, repeats: int) -> float:
    sequences = [[5] * (steps - 1) + [2]] * rows
    encoder.encode_batch(sequences)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        encoder.encode_batch(sequences)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    encoder = Encoder.load("default")
    shapes = [(rows, steps) for steps in STEPS for rows in ROWS if rows * steps <= MOST_TOKENS]
    seconds = np.array([best_seconds(encoder, rows, steps, args.repeats)
                        for rows, steps in shapes])
    design = np.array([[rows * steps, steps, 1.0] for rows, steps in shapes])
    # each shape weighed by 1 / its time: relative errors count alike for small and large batches
    (per_token, per_step, per_batch), *_ = np.linalg.lstsq(design / seconds[:, None],
                                                          np.ones_like(seconds), rcond=None)
    print("| rows | steps | ms | µs per token | fitted ms |")
    print("|---:|---:|---:|---:|---:|")
    for (rows, steps), measured, fitted in zip(shapes, seconds, design @ [per_token, per_step,
                                                                          per_batch]):
        print(f"| {rows} | {steps} | {1000 * measured:.2f} | "
              f"{1e6 * measured / (rows * steps):.0f} | {1000 * fitted:.2f} |")
    print(f"\nfit: {1e6 * per_token:.1f} µs a token; a step costs {per_step / per_token:.2f} "
          f"rows more, a batch {per_batch / per_token:.2f} tokens more "
          f"(batch_cost has STEP_COST_ROWS = {STEP_COST_ROWS}, "
          f"BATCH_COST_TOKENS = {BATCH_COST_TOKENS})")


if __name__ == "__main__":
    main()
