#!/usr/bin/env python3
"""What embedding a training batch in length-sorted pieces (`laser train --piece-sentences`)
saves: pairs per second of the optimiser step on real topic-grouped batches.

Draws the first --batches batches of a prepared work folder with a teacher cache and its topic
clusters (`laser train ... --teacher use --topic-clusters K` has built them), as the trainer
receives them at --max-length, and times `laser.training.trainer._optimise` on each for every
piece size of --pieces (0: the whole batch in one piece, padded to its longest sentence, as
before pieces), on the --shape network with torch's --threads threads, in bfloat16 autocast
unless --fp32. Prints the padding (padded over real tokens) and pairs per second of each size,
the median over the batches after one warm-up step.

    python bench/length_pieces.py WORK CORPUS/train [--max-length 128] [--pieces 0,1024,512,256]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.topic_batches import load  # noqa: E402
from bench.train_speed import shape_config  # noqa: E402
from laser.runtime.bilstm import BiLSTMEncoder  # noqa: E402
from laser.training.batches import Batch, BatchSampler  # noqa: E402
from laser.training.distill import Distiller  # noqa: E402
from laser.training.teachers import cache_stem  # noqa: E402
from laser.training.topics import TopicGrouping, topic_labels_path  # noqa: E402
from laser.training.trainer import _optimise, encoder_params, length_pieces  # noqa: E402


def padding(batch: Batch, pieces: int) -> float:
    """Padded tokens the network runs over, per real token."""
    padded = sum(p.tokens.numel() for p in length_pieces(batch, pieces))
    return padded / batch.lengths.sum().item()


def pairs_per_second(config, batches: list[Batch], targets) -> float:
    """Pairs per second of the median step over `batches` (the first one a warm-up)."""
    torch.manual_seed(0)
    model = BiLSTMEncoder(encoder_params(config)).train()
    distiller = Distiller(model.output_dim, targets, config.distill_weight)
    optimizer = torch.optim.Adam([*model.parameters(), *distiller.parameters()], lr=config.lr)

    def distillation(embeddings: torch.Tensor, batch: Batch) -> torch.Tensor:
        return distiller(embeddings, batch.teacher_rows)
    seconds = []
    for step, batch in enumerate(batches):
        started = time.perf_counter()
        _optimise(model, optimizer, config, step, batch, torch.device("cpu"), distillation)
        seconds.append(time.perf_counter() - started)
    return batches[0].size / statistics.median(seconds[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, help="a prepared `laser train` work folder")
    parser.add_argument("train", type=Path, help="the training pair files it was prepared from")
    parser.add_argument("--teacher", default="use")
    parser.add_argument("--topic-clusters", type=int, default=1024)
    parser.add_argument("--topic-band", type=int, default=64)
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--pieces", default="0,1024,512,256")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--shape", default="2x288")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fp32", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pairs, targets = load(args.work, args.train, args.teacher)
    labels = np.load(topic_labels_path(args.work / "teacher", cache_stem(args.teacher),
                                       args.topic_clusters))
    sampler = BatchSampler(pairs, args.batch_size, args.alpha, 1, args.max_length,
                           topics=TopicGrouping(labels, args.topic_band))
    batches = [sampler.batch(step) for step in range(args.batches + 1)]
    print(f"{args.batches} topic-grouped batches of {args.batch_size} pairs, --max-length "
          f"{args.max_length}, {args.shape} network, {args.threads} threads, "
          f"{'float32' if args.fp32 else 'bfloat16 autocast'}, torch {torch.__version__}")
    print("| sentences per piece | padding | pairs/s |")
    print("| --- | ---: | ---: |")
    for pieces in map(int, args.pieces.split(",")):
        config = shape_config(args.shape, bf16=not args.fp32, piece_sentences=pieces,
                              batch_size=args.batch_size)
        config.vocab_size = int(max(b.tokens.max() for b in batches)) + 1
        speed = pairs_per_second(config, batches, targets)
        mean_padding = statistics.mean(padding(b, pieces) for b in batches[1:])
        label = "whole batch" if pieces == 0 else f"{pieces:,}"
        print(f"| {label} | {mean_padding:.2f} | {speed:.0f} |", flush=True)


if __name__ == "__main__":
    main()
