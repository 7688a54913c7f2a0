#!/usr/bin/env python3
"""One `laser serve` process using every core against one single-core replica per core, the
clients split evenly between the replicas: sentences/s and server CPU per sentence, rounds
alternating in one run (docs/serving.md, "Several replicas behind a load balancer").

Run from the project root: python bench/serve_replicas.py [--clients 64] [--seconds 10]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import corpus_sentences, cpu_seconds, load, run, start  # noqa: E402

SERVE = [sys.executable, "-m", "laser", "serve", "--port", "0", "--model", "default"]


def start_replicas(count: int, threads: int, tmp: Path, clients: int) -> list:
    """`count` servers, each running its batches on `threads` cores."""
    command = [*SERVE, "--max-connections", str(4 * clients + 16)]
    return [start(command, tmp / "none", tmp / f"serve-{count}-{n}.log",
                  {"OMP_NUM_THREADS": str(threads)}) for n in range(count)]


async def split_load(ports: list[int], batches, clients: int, seconds: float):
    """The clients split evenly between the ports: sentences sent and the longest elapsed."""
    shares = await asyncio.gather(*(
        load(port, "/v1/embeddings", batches[i::len(ports)], clients // len(ports), seconds)
        for i, port in enumerate(ports)))
    return sum(share[1] for share in shares), max(share[2] for share in shares)


def measure(count: int, threads: int, batches, clients: int, seconds: float, tmp: Path) -> str:
    servers = start_replicas(count, threads, tmp, clients)
    try:
        ports = [port for _, port in servers]
        run(split_load(ports, batches, clients, 3))  # warm up
        before = sum(cpu_seconds(process.pid) for process, _ in servers)
        sentences, elapsed = run(split_load(ports, batches, clients, seconds))
        cpu = sum(cpu_seconds(process.pid) for process, _ in servers) - before
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=60)
    return (f"| {count} x {threads} core(s) | {sentences / elapsed:,.0f} | "
            f"{1000 * cpu / sentences:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10, help="per measured round")
    parser.add_argument("--rounds", type=int, default=2, help="of each layout, alternating")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    pool = corpus_sentences()
    rng = random.Random(1)
    batches = [rng.sample(pool, rng.randint(1, 8)) for _ in range(20000)]
    print(f"{args.clients} clients on /v1/embeddings, 1-8 sentences each, {args.seconds:g} s per "
          f"round, {cores} cores")
    print("| replicas x cores each | sentences/s | server CPU s / 1k sentences |")
    print("|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for count, threads in ((1, cores), (cores, 1)):
                print(measure(count, threads, batches, args.clients, args.seconds, Path(tmp)),
                      flush=True)


if __name__ == "__main__":
    main()
