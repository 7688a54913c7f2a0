#!/usr/bin/env python3
"""Time and peak memory of --unify's grouping (`laser.mining.unify`) as the lines grow, beside
the grouping it replaced (every line's 16-byte digest in memory, then `np.unique`).

    python bench/unify_scale.py --lines 1000000 2000000 4000000 [--memory-mib 64]

Each measurement is a fresh process; the lines are synthetic (half of them duplicates),
generated as they are read. The time comes from one run, the peak memory from another under
`tracemalloc` (Python's and numpy's allocations: the text of a line at a time, the digests, the
arrays; not the pages of memory-mapped files), which slows allocations down too much to time."""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np


def lines(count: int):
    for i in range(count):
        yield f"Sentence number {i % (count // 2)} of a synthetic side."


def in_memory(count: int) -> int:
    """The former grouping: all digests held, then sorted at once; returns the sentences."""
    digests = bytearray()
    for text in lines(count):
        digests += hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
    keys = np.frombuffer(bytes(digests), dtype="S16")
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return len(first)


def spilled(count: int, memory: int) -> int:
    from laser.mining.unify import UnifyOptions, unify_lines
    with tempfile.TemporaryDirectory() as work:
        return len(unify_lines(lines(count), UnifyOptions(memory=memory), work).first_line)


def measure(kind: str, count: int, memory: int, traced: bool) -> dict:
    """Seconds of one grouping, or (`traced`) its peak allocations in MiB."""
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    sentences = in_memory(count) if kind == "in-memory" else spilled(count, memory)
    if traced:
        peak = tracemalloc.get_traced_memory()[1]
        return dict(sentences=sentences, peak_mib=round(peak / 2 ** 20))
    return dict(sentences=sentences, seconds=round(time.perf_counter() - started, 1))


def child(kind: str, count: int, memory_mib: int, traced: bool) -> dict:
    command = [sys.executable, __file__, "--memory-mib", str(memory_mib), "--one", kind,
               str(count)] + (["--traced"] if traced else [])
    return json.loads(subprocess.run(command, check=True, capture_output=True,
                                     text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 2_000_000])
    parser.add_argument("--memory-mib", type=int, default=64)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # KIND LINES, in a child
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), args.memory_mib << 20,
                                 args.traced)))
        return
    print(f"{'grouping':<10} {'lines':>10} {'sentences':>10} {'seconds':>8} {'peak MiB':>9}")
    for count in args.lines:
        for kind in ("in-memory", "spilled"):
            timed = child(kind, count, args.memory_mib, traced=False)
            traced = child(kind, count, args.memory_mib, traced=True)
            print(f"{kind:<10} {count:>10,} {timed['sentences']:>10,} {timed['seconds']:>8} "
                  f"{traced['peak_mib']:>9}", flush=True)


if __name__ == "__main__":
    main()
