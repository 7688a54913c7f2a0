#!/usr/bin/env python3
"""What `laser train --chunk-sentences` (the gradient cache) costs and saves: time per pair and
peak memory of one training step, whole batches against chunked ones.

Each BATCH:CHUNK of --runs (CHUNK 0: the whole batch at once) runs in a fresh process, so that its
peak resident memory is its own: random batches of 8-40-token sentences (bench/train_speed.py's),
the --shape network (LAYERSxHIDDEN) in bfloat16 autocast unless --fp32, --steps timed steps after
one warm-up step; prints pairs per second (the median step) and the peak resident memory.

    python bench/chunked_training.py [--runs 2048:0,2048:1024,4096:0,4096:1024] [--shape 2x288]
"""
from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.train_speed import pairs_per_second, random_batch, shape_config  # noqa: E402


def measure(pairs: int, chunk: int, shape: str, bf16: bool, steps: int,
            threads: int) -> tuple[float, float]:
    """(pairs per second, peak resident GiB) of this process training at this setting."""
    torch.set_num_threads(threads)
    config = shape_config(shape, bf16=bf16, batch_size=pairs, chunk_sentences=chunk)
    speed = pairs_per_second(config, random_batch(pairs), steps, warmup=1)
    return speed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="2048:0,2048:1024,4096:0,4096:1024")
    parser.add_argument("--shape", default="2x288")
    parser.add_argument("--fp32", action="store_true", help="float32 instead of bf16 autocast")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    print(f"{args.shape} network, {'float32' if args.fp32 else 'bf16 autocast'}, "
          f"{args.threads} threads, torch {torch.__version__}, median of {args.steps} steps")
    print("| pairs per batch | sentences per chunk | pairs/s | peak memory |")
    print("|---:|---:|---:|---:|")
    context = multiprocessing.get_context("spawn")
    for run in args.runs.split(","):
        pairs, chunk = (int(part) for part in run.split(":"))
        with context.Pool(1) as pool:
            speed, peak = pool.apply(measure, (pairs, chunk, args.shape, not args.fp32,
                                               args.steps, args.threads))
        print(f"| {pairs:,} | {f'{chunk:,}' if chunk else 'whole batch'} | {speed:.0f} | "
              f"{peak:.1f} GiB |", flush=True)


if __name__ == "__main__":
    main()
