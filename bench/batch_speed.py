#!/usr/bin/env python3
"""How long `laser train`'s batch sampler takes to build a batch from a prepared work folder:
the token ids of both sides read by memory map, cut, padded, the shared sides marked, and the
teacher rows looked up (with --teacher, as the v2 runs do), on one thread. On a GPU this is the
CPU's share of a step; the trainer builds the next batch in a background thread meanwhile.

    python bench/batch_speed.py WORK [--batch-size 2048] [--batches 192] [--topic-clusters 1024]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from laser.training.batches import BatchSampler, load_pairs  # noqa: E402
from laser.training.teachers import cache_stem  # noqa: E402
from laser.training.topics import TopicGrouping, topic_labels_path  # noqa: E402


def sampler_of(work: Path, args) -> BatchSampler:
    languages = json.loads((work / "prepare.json").read_text())["languages"]
    pairs = load_pairs(work / "ids-train", languages)
    topics = None
    if args.topic_clusters:
        labels = np.load(topic_labels_path(work / "teacher", cache_stem(args.teacher),
                                           args.topic_clusters))
        topics = TopicGrouping(labels, args.topic_band)
        rows = np.arange(len(labels))  # any teacher rows: the lookup's cost, not its values
        pairs = [replace(p, teacher_rows=rows[:len(p)]) for p in pairs]
    return BatchSampler(pairs, args.batch_size, args.alpha, 1, args.max_length,
                        args.pool_batches, topics)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--batches", type=int, default=192)
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--max-length", type=int, default=48)
    parser.add_argument("--pool-batches", type=int, default=64)
    parser.add_argument("--teacher", default="use")
    parser.add_argument("--topic-clusters", type=int, default=1024, help="0: length only")
    parser.add_argument("--topic-band", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sampler = sampler_of(args.work, args)
    times = []
    for step in range(args.batches):
        started = time.perf_counter()
        sampler.batch(step)
        times.append(time.perf_counter() - started)
    per_batch = sum(times) / len(times)
    print(f"{args.batches} batches of {args.batch_size} pairs: {1000 * per_batch:.1f} ms a batch "
          f"on average (pool draws included, median {1000 * statistics.median(times):.1f} ms), "
          f"{args.batch_size / per_batch:,.0f} pairs/s")


if __name__ == "__main__":
    main()
