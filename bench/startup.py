#!/usr/bin/env python3
"""Start-up cost of the `laser` command: each command line run --runs times as a fresh process.

Like hyperfine: wall time of whole subprocesses, reported as best and median, next to the
interpreter alone and `import torch` for scale. The 10-line embedding uses the shipped model and
the first 10 French dev sentences (tests/data/corpus/dev), so nearly all of its time is overhead.

    python bench/startup.py [--runs 5]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
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
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import torch'": [sys.executable, "-c", "import torch"],
        "laser --help": laser + ["--help"],
        "laser embed --help": laser + ["embed", "--help"],
        "laser embed missing.txt (error)": laser + ["embed", str(directory / "missing.txt"),
                                                    "-o", output, "-l", "fr"],
        "laser embed fr10.txt (10 lines)": laser + ["embed", str(source), "-o", output,
                                                    "-l", "fr", "--quiet"],
        "laser embed fr10.txt --quantize int8": laser + ["embed", str(source), "-o", output,
                                                         "-l", "fr", "--quiet",
                                                         "--quantize", "int8"],
    }


def wall_times(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lines = commands(Path(tmp))
        wall_times(lines["laser --help"], 1)  # warm the file cache
        print(f"| command | best s | median s |  ({args.runs} runs each)")
        print("| --- | ---: | ---: |")
        for label, command in lines.items():
            times = wall_times(command, args.runs)
            print(f"| `{label}` | {min(times):.3f} | {statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
