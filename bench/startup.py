#!/usr/bin/env python3
"""Start-up cost of the `laser` command: each command line run --runs times as a fresh process.

Like hyperfine: wall time of whole subprocesses, reported as best and median, next to the
interpreter alone and `import torch` for scale. The 10-line embedding uses the shipped model and
the first 10 French dev sentences (tests/data/corpus/dev), so nearly all of its time is overhead.
$LASER_HOME is a temporary folder: the ONNX graphs are cached there before the timed runs, except
for the "first run" row, which empties it before each run.

    python bench/startup.py [--runs 5]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRENCH = ROOT / "tests/data/corpus/dev/fra-eng.tsv.gz"


def commands(directory: Path) -> dict[str, list[str]]:
    """The command lines to time, by label."""
    source = directory / "fr10.txt"
    with gzip.open(FRENCH, "rt", encoding="utf-8") as f:
        source.write_text("".join(line.split("\t")[0] + "\n" for line in itertools.islice(f, 10)),
                          encoding="utf-8")
    laser = [sys.executable, "-m", "laser"]
    output = str(directory / "out.npy")
    embed = laser + ["embed", str(source), "-o", output, "-l", "fr", "--quiet"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import torch'": [sys.executable, "-c", "import torch"],
        "laser --help": laser + ["--help"],
        "laser embed --help": laser + ["embed", "--help"],
        "laser embed missing.txt (error)": laser + ["embed", str(directory / "missing.txt"),
                                                    "-o", output, "-l", "fr"],
        "laser embed fr10.txt (10 lines)": embed,
        "laser embed fr10.txt --quantize int8": embed + ["--quantize", "int8"],
        "laser embed fr10.txt --runtime torch": embed + ["--runtime", "torch"],
        "laser embed fr10.txt, first run (builds the graph)": embed,
    }


def wall_times(command: list[str], runs: int, home: Path, fresh_home: bool) -> list[float]:
    """Wall seconds of `runs` runs with $LASER_HOME at `home`, emptied before each with
    `fresh_home` (so the ONNX graph is built again)."""
    times = []
    for _ in range(runs):
        if fresh_home:
            shutil.rmtree(home, ignore_errors=True)
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "LASER_HOME": str(home)})
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lines, home = commands(Path(tmp)), Path(tmp) / "laser-home"
        wall_times(lines["laser --help"], 1, home, False)  # warm the file cache
        for warm_up in ("laser embed fr10.txt (10 lines)", "laser embed fr10.txt --quantize int8"):
            wall_times(lines[warm_up], 1, home, False)  # cache the float32 and int8 graphs
        print(f"| command | best s | median s |  ({args.runs} runs each)")
        print("| --- | ---: | ---: |")
        for label, command in lines.items():
            times = wall_times(command, args.runs, home, fresh_home="first run" in label)
            print(f"| `{label}` | {min(times):.3f} | {statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
