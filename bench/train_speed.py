#!/usr/bin/env python3
"""Training speed by network shape, float32 against `--bf16` (bfloat16 autocast).

Times the optimiser step `laser train` takes (`laser.training.trainer._optimise`: forward pass,
ranking loss, backward pass, clipping, Adam) on random batches of --batch-size pairs of
8-40-token sentences, for each shape of --shapes (LAYERSxHIDDEN, 256-d embeddings, the shipped
model's 29,133-token vocabulary), with torch's --threads threads; prints pairs per second, the
median of --steps steps after two warm-up steps. No data or teacher is needed. `--device cuda`
times the same steps on a GPU (`laser train --device cuda`), in float32 only (`--bf16` is
CPU-only). `--piece-sentences` and `--longest` time the length-sorted pieces (`laser train
--piece-sentences`; 0: the whole batch in one piece) on sentences of up to --longest tokens.

    python bench/train_speed.py [--shapes 1x320,2x320,3x320,1x512,2x512] [--threads 2]
    python bench/train_speed.py --device cuda --shapes 2x288 --batch-size 2048
    python bench/train_speed.py --device cuda --shapes 2x288 --piece-sentences 0 --longest 128
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from laser.runtime.bilstm import BiLSTMEncoder  # noqa: E402
from laser.training.batches import Batch  # noqa: E402
from laser.training.config import TrainConfig, pieces_for  # noqa: E402
from laser.training.trainer import _optimise, encoder_params  # noqa: E402

VOCABULARY = 29133  # the shipped model's


def random_batch(pairs: int, longest: int = 40) -> Batch:
    lengths = torch.randint(8, longest + 1, (2 * pairs,))
    tokens = torch.randint(4, VOCABULARY, (2 * pairs, longest))
    for row, length in enumerate(lengths):
        tokens[row, length:] = 1  # padding
    return Batch(tokens, lengths, torch.zeros(pairs, pairs, dtype=torch.bool), ["xx"] * pairs)


def shape_config(shape: str, **settings) -> TrainConfig:
    """The TrainConfig of a LAYERSxHIDDEN network over the shipped model's vocabulary."""
    layers, hidden = (int(part) for part in shape.split("x"))
    return TrainConfig(vocab_size=VOCABULARY, hidden_size=hidden, num_layers=layers, **settings)


def pairs_per_second(config: TrainConfig, batch: Batch, steps: int, device: str = "cpu",
                     warmup: int = 2) -> float:
    """Pairs per second of the median of `steps` optimiser steps on `batch`, after `warmup`
    (each step ends with the loss read back, so a GPU has finished it)."""
    torch.manual_seed(0)
    model = BiLSTMEncoder(encoder_params(config)).to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    seconds = []
    for step in range(steps + warmup):
        started = time.perf_counter()
        _optimise(model, optimizer, config, step, batch, torch.device(device))
        seconds.append(time.perf_counter() - started)
    return batch.size / statistics.median(seconds[warmup:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="1x320,2x320,3x320,1x512,2x512")
    parser.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--piece-sentences", type=int, default=None,
                        help="default: laser train's on --device")
    parser.add_argument("--longest", type=int, default=40, help="the longest sentence, in tokens")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    batch = random_batch(args.batch_size, args.longest)
    pieces = {"piece_sentences": pieces_for(args.piece_sentences, args.device)}
    where = (f"{args.threads} threads" if args.device == "cpu"
             else torch.cuda.get_device_name(args.device))
    print(f"pairs/s per training step, batch {args.batch_size} pairs of 8-{args.longest} tokens, "
          f"pieces of {pieces['piece_sentences'] or 'the whole batch'}, {where}, "
          f"torch {torch.__version__}, median of {args.steps} steps")
    print("| layers x hidden | float32 | --bf16 | speed-up |")
    print("| --- | ---: | ---: | ---: |")
    for shape in args.shapes.split(","):
        fp32 = pairs_per_second(shape_config(shape, **pieces), batch, args.steps, args.device)
        if args.device != "cpu":
            print(f"| {shape.replace('x', ' x ')} | {fp32:.0f} | | |")
            continue
        bf16 = pairs_per_second(shape_config(shape, bf16=True, **pieces), batch, args.steps)
        print(f"| {shape.replace('x', ' x ')} | {fp32:.0f} | {bf16:.0f} | {bf16 / fp32:.2f}x |")


if __name__ == "__main__":
    main()
