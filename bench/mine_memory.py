#!/usr/bin/env python3
"""Peak anonymous memory (RssAnon) of every process of `laser mine --index IVF256,PQ32x4fs
--nprobe 16` as the corpus grows, this checkout beside another one (the baseline), on
synthetic 576-d embeddings (float16 .npy) where half the lines are planted pairs.

    python bench/mine_memory.py --lines 250000 1000000 [--baseline-tree /tmp/laser-before]

`--baseline-tree` is a checkout of the code to compare with (e.g. `git archive 06dcaeb | tar -x
-C /tmp/laser-before`). Each run is a fresh `laser mine` whose process tree is sampled every
0.05 s from /proc: the figure is the highest RssAnon any one process reached (memory-mapped
embeddings and shards are file pages, not anonymous). Data and work folders go under bench/out/.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out" / "mine_memory"
ROOT = Path(__file__).resolve().parent.parent
DIM = 576
INDEX = ["--index", "IVF256,PQ32x4fs", "--nprobe", "16"]


def synthetic(lines: int) -> Path:
    """src/trg texts and float16 embeddings: target i < lines/2 is source perm[i] plus noise."""
    folder = OUT / f"data-{lines}"
    if (folder / "done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    planted = lines // 2
    perm = rng.permutation(lines)[:planted]
    x = np.lib.format.open_memmap(folder / "x.npy", "w+", np.float16, (lines, DIM))
    y = np.lib.format.open_memmap(folder / "y.npy", "w+", np.float16, (lines, DIM))
    step = 65536
    for start in range(0, lines, step):
        stop = min(lines, start + step)
        x[start:stop] = rng.standard_normal((stop - start, DIM), dtype=np.float32)
    for start in range(0, lines, step):
        stop = min(lines, start + step)
        rows = rng.standard_normal((stop - start, DIM), dtype=np.float32)
        mine = np.arange(start, stop) < planted
        source = perm[start:min(stop, planted)]
        rows[mine] = x[source].astype(np.float32) + 0.3 * rows[mine]
        y[start:stop] = rows
    x.flush()
    y.flush()
    for side in ("src", "trg"):
        with open(folder / f"{side}.txt", "w") as out:
            out.writelines(f"{side} sentence {i}\n" for i in range(lines))
    (folder / "done").write_text("")
    return folder


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += _children(current)
    return pids


def _rss_anon(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run(tree: Path, data: Path, work: Path) -> dict:
    """Peak RssAnon per process of one `laser mine`, and its wall time."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    output = work / "mined.ids"
    command = [sys.executable, "-m", "laser", "mine", str(data / "src.txt"), str(data / "trg.txt"),
               "--src-embeddings", str(data / "x.npy"), "--trg-embeddings", str(data / "y.npy"),
               *INDEX, "--output-format", "ids", "-o", str(output)]
    if tree == ROOT:
        command += ["--work-dir", str(work / "stages")]
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env)
    peaks: dict[int, int] = {}
    while process.poll() is None:
        for pid in _tree(process.pid):
            peaks[pid] = max(peaks.get(pid, 0), _rss_anon(pid))
        time.sleep(0.05)
    if process.returncode:
        raise SystemExit(f"laser mine failed ({process.returncode})")
    pairs = sum(1 for _ in open(output))
    index = sorted((work / "stages").glob("*-index/side.index"))
    return {"wall_s": round(time.perf_counter() - started, 1),
            "peak_rss_anon_mib": round(max(peaks.values()) / 2 ** 20, 1),
            "processes": len(peaks), "pairs": pairs,
            "index_bytes_per_row": (round(index[0].stat().st_size / int(data.name.split("-")[1]),
                                          1) if index else None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[250_000, 1_000_000])
    parser.add_argument("--baseline-tree", type=Path, default=None)
    args = parser.parse_args()
    trees = [("now", ROOT)] + ([("baseline", args.baseline_tree)] if args.baseline_tree else [])
    for lines in args.lines:
        data = synthetic(lines)
        for name, tree in trees:
            result = run(tree, data, OUT / f"{name}-{lines}")
            print(json.dumps({"code": name, "lines": lines, **result}), flush=True)


if __name__ == "__main__":
    main()
