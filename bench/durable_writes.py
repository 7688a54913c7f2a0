#!/usr/bin/env python3
"""What making outputs durable costs: seconds to write a 10 MB and a 1 GB embedding file
through `EmbeddingWriter` (the path of `laser embed -o`), as shipped and without the fsyncs.

Side by side in one run, alternating, `--rounds` times per size:
* `durable` — as shipped: the temp file fsynced before its rename, the directory after;
* `not durable` — the same code with `os.fsync` made a no-op for the write (as outputs were
  written before): the rename is done while the data may still sit in the page cache.

Each write starts from a clean page cache (`os.sync()` before it, not timed) and its file is
deleted after, so the one left unsynced does not slow the next. The files go to --directory
(default bench/out/, git-ignored), which must be on the disk to measure, not a tmpfs.

    python bench/durable_writes.py [--rounds 3] [--directory bench/out]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from laser.io.embeddings import EmbeddingWriter  # noqa: E402

DIM = 1024
CHUNK_ROWS = 4096  # 16 MiB of float32 per write, as `laser embed` appends a chunk
SIZES = {"10 MB": 10 * 2**20, "1 GB": 2**30}


@contextmanager
def without_fsync() -> Iterator[None]:
    """`os.fsync` as a no-op, restored after."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def write(path: Path, rows: int, chunk: np.ndarray) -> float:
    """Seconds to write `rows` rows of `chunk`'s width as an .npy output."""
    started = time.perf_counter()
    with EmbeddingWriter(path, DIM) as writer:
        for start in range(0, rows, len(chunk)):
            writer.write(chunk[:min(len(chunk), rows - start)])
    return time.perf_counter() - started


def timed(path: Path, rows: int, chunk: np.ndarray, durable: bool) -> float:
    os.sync()
    if durable:
        seconds = write(path, rows, chunk)
    else:
        with without_fsync():
            seconds = write(path, rows, chunk)
    path.unlink()
    return seconds


def file_system(directory: Path) -> str:
    found = subprocess.run(["df", "--output=fstype,source", str(directory)], capture_output=True,
                           text=True, check=False).stdout.split()
    return " on ".join(found[-2:]) if len(found) >= 2 else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--directory", type=Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    args.directory.mkdir(parents=True, exist_ok=True)
    chunk = np.random.default_rng(0).standard_normal((CHUNK_ROWS, DIM), dtype=np.float32)
    print(f"{platform.node()}: {platform.platform()}, {os.cpu_count()} CPUs, "
          f"{file_system(args.directory)}; {args.rounds} rounds, median seconds")
    print("| output | not durable | durable | added by the fsyncs | durable MB/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, size in SIZES.items():
        rows = size // (DIM * 4)
        path = args.directory / "durable-writes.npy"
        seconds: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.rounds):
            for durable in (False, True):
                seconds[durable].append(timed(path, rows, chunk, durable))
        fast, safe = (statistics.median(seconds[durable]) for durable in (False, True))
        print(f"| {label} | {fast:.3f} | {safe:.3f} | +{safe - fast:.3f} s ({safe / fast:.1f}x) "
              f"| {size / 2**20 / safe:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
