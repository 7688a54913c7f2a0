#!/usr/bin/env python3
"""`laser mine` with 1 and 2 BLAS/OpenMP threads, this checkout beside a baseline revision: wall
times, pair counts, and whether the two thread counts wrote the same bytes.

    python bench/mine_threads.py [--corpus ../shared/data/corpus/train/fra-eng.tsv.gz] \
        [--lines 9000] [--rounds 3] [--baseline REV]

Builds French and English files from a `foreign<TAB>english` corpus (two thirds of the lines
translations of each other, one third distractors, English shuffled), embeds them once with the
shipped model into bench/out/, then runs `laser mine ... --mode mine` as a subprocess for each
revision and thread count, alternating them in every round. The baseline (default: the revision
before the k-NN re-scored every similarity in a fixed order) is extracted with `git archive`.
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "mine_threads"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def build_corpus(corpus: str, lines: int) -> tuple[Path, Path]:
    """fr.txt and en.txt: `lines` lines each, 2/3 of them translations, en shuffled (seeded)."""
    with gzip.open(corpus, "rt", encoding="utf-8") as stream:
        rows = [line.rstrip("\n").split("\t") for line in stream]
    rng = random.Random(59)
    rng.shuffle(rows)
    pairs = 2 * lines // 3
    french = [row[0] for row in rows[:lines]]
    english = [row[1] for row in rows[:pairs] + rows[lines:2 * lines - pairs]]
    rng.shuffle(english)
    fr, en = OUT / f"fr-{lines}.txt", OUT / f"en-{lines}.txt"
    fr.write_text("".join(f"{line}\n" for line in french), encoding="utf-8")
    en.write_text("".join(f"{line}\n" for line in english), encoding="utf-8")
    return fr, en


def embed(text: Path, lang: str) -> Path:
    """The embeddings of `text` (made once, by this checkout)."""
    output = text.with_suffix(".npy")
    if not output.exists():
        subprocess.run([sys.executable, "-m", "laser", "embed", str(text), "-o", str(output),
                        "--lang", lang, "-q"], check=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    return output


def baseline_revision() -> str:
    """The revision before exact k-NN re-scored every similarity in one fixed order."""
    change = subprocess.run(["git", "log", "--format=%H", "-S_accumulation_bound", "--reverse",
                             "--", "laser/search/exact.py"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()[0]
    return f"{change}^"


def extract(revision: str, into: Path) -> Path:
    """The `laser` package of `revision`, unpacked under `into`."""
    archive = subprocess.run(["git", "archive", "--format=tar", revision, "laser"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    with tempfile.TemporaryFile() as spool:
        spool.write(archive)
        spool.seek(0)
        with tarfile.open(fileobj=spool) as tar:
            tar.extractall(into, filter="data")
    return into


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def mine(code: Path, threads: int, fr: Path, en: Path, output: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `laser mine` run of the package under `code` with `threads`
    threads (CPU time is steadier than wall time on a shared machine)."""
    env = {**os.environ, "PYTHONPATH": str(code),
           **{name: str(threads) for name in THREAD_VARIABLES}}
    start, cpu = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-m", "laser", "mine", str(fr), str(en),
                    "--src-embeddings", str(fr.with_suffix(".npy")),
                    "--trg-embeddings", str(en.with_suffix(".npy")), "--mode", "mine",
                    "-o", str(output)], check=True, env=env, cwd=code)
    return time.perf_counter() - start, children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="../shared/data/corpus/train/fra-eng.tsv.gz",
                        help="foreign<TAB>english lines, gzipped")
    parser.add_argument("--lines", type=int, default=9000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default=None,
                        help="git revision (default: the one before the change)")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    fr, en = build_corpus(args.corpus, args.lines)
    embed(fr, "fr")
    embed(en, "en")
    baseline = args.baseline or baseline_revision()
    with tempfile.TemporaryDirectory() as scratch:
        versions = {f"baseline ({baseline})": extract(baseline, Path(scratch)),
                    "this checkout": ROOT}
        times: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for name, code in versions.items():
                for threads in (1, 2):
                    output = OUT / f"{name.split()[0]}-{threads}.tsv"
                    timing = mine(code, threads, fr, en, output)
                    times.setdefault((name, threads), []).append(timing)
    print(f"laser mine, {args.lines} fr x {args.lines} en lines, median wall (CPU) time of "
          f"{args.rounds} rounds")
    for name in versions:
        outputs = [(OUT / f"{name.split()[0]}-{threads}.tsv").read_bytes() for threads in (1, 2)]
        counts = " / ".join(str(out.count(b"\n")) for out in outputs)
        seconds = " / ".join(f"{statistics.median(wall for wall, _ in times[name, threads]):.1f} s "
                             f"({statistics.median(cpu for _, cpu in times[name, threads]):.1f} s "
                             "CPU)" for threads in (1, 2))
        print(f"  {name}\n    1 / 2 threads: {seconds}; pairs {counts}, "
              f"{'identical bytes' if outputs[0] == outputs[1] else 'DIFFERENT outputs'}")


if __name__ == "__main__":
    main()
