#!/usr/bin/env python3
"""What topic grouping (`laser train --topic-clusters`) does to the training batches.

For random batches of several sizes and for topic-grouped batches of --batch-size pairs (each
`K:BAND[:POOL]` of --grouped), over the first --batches batches of a prepared work folder with a
teacher cache (`laser train ... --teacher T` has built both), prints:
- padding: padded tokens over real tokens of both sides (cut to --max-length), the cost in speed;
- distinct English: the share of a batch's English sides that are not copies of another;
- hardest negative: for each pair of the --top largest languages, the largest teacher cosine
  between its English side and another English sentence of its batch, averaged (how hard the
  in-batch negatives are, in the teacher's eyes);
and the time of each k-means clustering.

    python bench/topic_batches.py WORK CORPUS/train [--teacher use] [--alpha 0.5]
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from laser.training.batches import BatchSampler, LanguagePairs, load_pairs  # noqa: E402
from laser.training.config import TrainConfig  # noqa: E402
from laser.training.corpus import find_pair_files  # noqa: E402
from laser.training.distill import TeacherTargets, english_sentences, sentence_rows  # noqa: E402
from laser.training.teachers import cache_stem  # noqa: E402
from laser.training.topics import TopicGrouping, cluster_targets  # noqa: E402


def load(work: Path, train: Path, teacher: str) -> tuple[list[LanguagePairs], TeacherTargets]:
    files = find_pair_files(train)
    rows = sentence_rows(files, english_sentences(files))
    pairs = [replace(p, teacher_rows=rows[p.lang])
             for p in load_pairs(work / "ids-train", [pf.lang for pf in files])]
    cache = np.load(work / "teacher" / f"{cache_stem(teacher)}.f16.npy", mmap_mode="r")
    return pairs, TeacherTargets(cache)


def batch_statistics(sampler: BatchSampler, targets: TeacherTargets, queries: set[str],
                     batches: int) -> tuple[float, float, float]:
    """Mean padding ratio, distinct-English share and hardest-negative cosine of the first
    `batches` batches, as the trainer receives them."""
    padding, distinct, hardest = [], [], []
    for step in range(batches):
        batch = sampler.batch(step)
        padding.append(batch.tokens.numel() / batch.lengths.sum().item())
        english = batch.teacher_rows
        distinct.append(len(set(english)) / len(english))
        asking = torch.tensor([lang in queries for lang in batch.languages])
        if asking.any():
            vectors = targets(english)
            similarity = vectors[asking] @ vectors.t()
            similarity[torch.from_numpy(english[asking.numpy()][:, None] == english[None, :])] = -2
            hardest.extend(similarity.max(1).values.tolist())
    return float(np.mean(padding)), float(np.mean(distinct)), float(np.mean(hardest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, help="a prepared `laser train` work folder")
    parser.add_argument("train", type=Path, help="the training pair files it was prepared from")
    parser.add_argument("--teacher", default="use")
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--random-sizes", default="2048,4096,8192")
    parser.add_argument("--grouped", default="256:8,1024:4,1024:8,1024:16,1024:64",
                        help="K:BAND[:POOL] (--topic-clusters K --topic-band BAND "
                             "--pool-batches POOL, default 64)")
    parser.add_argument("--batches", type=int, default=32)
    parser.add_argument("--top", type=int, default=20, help="query languages: the largest ones")
    parser.add_argument("--max-length", type=int, default=48)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pairs, targets = load(args.work, args.train, args.teacher)
    queries = {p.lang for p in sorted(pairs, key=lambda p: -len(p))[:args.top]}

    def report(label: str, sampler: BatchSampler) -> None:
        padding, distinct, hardest = batch_statistics(sampler, targets, queries, args.batches)
        print(f"| {label} | {padding:.2f} | {100 * distinct:.0f}% | {hardest:.3f} |", flush=True)

    print("| batches | padding | distinct English sentences | hardest negative, top queries |")
    print("|---|---:|---:|---:|")
    for size in map(int, args.random_sizes.split(",")):
        report(f"random, {size:,} pairs", BatchSampler(pairs, size, args.alpha, args.seed,
                                                      args.max_length))
    labels: dict[int, np.ndarray] = {}
    for spec in args.grouped.split(","):
        clusters, band, pool = (list(map(int, spec.split(":"))) + [TrainConfig.pool_batches])[:3]
        if clusters not in labels:
            started = time.perf_counter()
            labels[clusters] = cluster_targets(targets, clusters, args.seed)
            print(f"k-means, {clusters} clusters: {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)
        grouping = TopicGrouping(labels[clusters], band)
        report(f"{clusters:,} topics, band {band} of pool {pool}, {args.batch_size:,} pairs",
               BatchSampler(pairs, args.batch_size, args.alpha, args.seed, args.max_length,
                            pool, grouping))


if __name__ == "__main__":
    main()
