#!/usr/bin/env python3
"""`Encoder.encode` on a few sentences at a time, as a server, a notebook or a loop over lines
calls it: wall and CPU milliseconds per call with the shipped model in ONNX Runtime.

Side by side in one run, alternating, on the same sentences:
* `kept threads` — the encoder as it is: a lone batch runs in the calling thread, and batches
  side by side run on threads started once per encoder and kept (`BatchPool`);
* `threads per call` — the way before: a thread pool started and ended on every call, even for
  a lone batch.

Sentences are the first English dev sentences (tests/data/corpus/dev).

    python bench/small_calls.py [--calls 200] [--rounds 3]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENGLISH = ROOT / "tests/data/corpus/dev/fra-eng.tsv.gz"

from laser import Encoder  # noqa: E402
from laser.runtime.sequences import BatchPool  # noqa: E402


class PoolPerCall(BatchPool):
    """The way before: a fresh pool for every call, which starts a thread for every batch."""

    def run_all(self, embed_batch, batches) -> None:
        with ThreadPoolExecutor(self.workers, thread_name_prefix="laser-batch") as pool:
            for _ in pool.map(embed_batch, batches):
                pass


def per_call(encoder: Encoder, sentences: list[str], calls: int) -> tuple[float, float]:
    """Milliseconds of wall and CPU time per `encode` call, after a warm-up."""
    for _ in range(10):
        encoder.encode(sentences, "en")
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        encoder.encode(sentences, "en")
    return (1000 * (time.perf_counter() - wall) / calls,
            1000 * (time.process_time() - cpu) / calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with gzip.open(ENGLISH, "rt", encoding="utf-8") as f:
        english = [line.rstrip("\n").split("\t")[1] for line in itertools.islice(f, 16)]
    encoder = Encoder.load("default")
    network = encoder.network.module
    kept, fresh = network.pool, PoolPerCall(network.workers)
    print(f"{network.workers} batches side by side; median of {args.rounds} rounds of "
          f"{args.calls} calls")
    print("| sentences per call | kept threads: wall ms | CPU ms | threads per call: wall ms "
          "| CPU ms |")
    print("|---:|---:|---:|---:|---:|")
    for count in (1, 4, 16):
        timings = {"kept": [], "fresh": []}
        for _ in range(args.rounds):
            for name, pool in (("kept", kept), ("fresh", fresh)):
                network.pool = pool
                timings[name].append(per_call(encoder, english[:count], args.calls))
        network.pool = kept
        cells = [f"{statistics.median(t[i] for t in timings[name]):.2f}"
                 for name in ("kept", "fresh") for i in (0, 1)]
        print(f"| {count} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
