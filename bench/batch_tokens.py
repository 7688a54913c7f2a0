#!/usr/bin/env python3
"""How big an ONNX Runtime batch should be: encoder speed by padded tokens per batch.

`laser.runtime.onnx_runtime.BATCH_TOKENS` caps every batch the CPU runs, whatever --max-tokens
allows (one batch per core). This bench times `Encoder.encode_ids` on ids prepared beforehand
with the cap set to each of --sizes, alternating sizes and keeping each one's best of --repeats,
in float32 and int8, for the shipped model (20,000 French dev lines from tests/data) and for a
random checkpoint of the full LASER1 shape (--sentences French dev lines, as
bench/embed_speed.py builds it; needs ../shared).

    python bench/batch_tokens.py [--sizes 250,500,1000,2000,6000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import embed_speed  # noqa: E402  (puts the repository on sys.path)
from pipeline_speed import VENDORED_FRENCH, french_lines  # noqa: E402

from laser.runtime import onnx_runtime  # noqa: E402
from laser.encoder import Encoder  # noqa: E402
from laser.models.files import ModelFiles  # noqa: E402


def speeds(encoder: Encoder, sequences: list[list[int]], sizes: list[int],
           repeats: int) -> dict[int, float]:
    """Sentences per second at each batch cap, best of `repeats` alternating runs."""
    best = dict.fromkeys(sizes, float("inf"))
    for _ in range(repeats):
        for size in sizes:
            onnx_runtime.BATCH_TOKENS = size
            best[size] = min(best[size], embed_speed.timed(encoder.encode_ids, sequences)[1])
    return {size: len(sequences) / seconds for size, seconds in best.items()}


def shipped_model_rows(sizes: list[int], repeats: int, lines: int) -> list[tuple[str, dict]]:
    rows, sequences = [], None  # the ids do not depend on the precision: prepared once
    for quantize in (None, "int8"):
        encoder = Encoder.load("default", quantize=quantize)
        sequences = sequences or encoder.prepare(french_lines(VENDORED_FRENCH, lines), "fr")
        rows.append((f"shipped model, {quantize or 'fp32'}, {lines:,} lines",
                     speeds(encoder, sequences, sizes, repeats)))
    return rows


def laser1_shape_rows(sizes: list[int], repeats: int, sentences: int) -> list[tuple[str, dict]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LASER_HOME"] = tmp  # the graphs of a throw-away checkpoint
        directory = Path(tmp)
        checkpoint = embed_speed.build_checkpoint(directory)
        files = ModelFiles(checkpoint, directory / "bpe.fcodes", directory / "bpe.fvocab")
        french = embed_speed.dev_sentences(sentences, ["fra"])["fra"]
        sequences = None  # the ids do not depend on the precision: prepared once
        for quantize in (None, "int8"):
            encoder = Encoder(files, quantize=quantize)
            sequences = sequences or encoder.prepare(french, "fr")
            rows.append((f"LASER1 shape, {quantize or 'fp32'}, {sentences:,} lines",
                         speeds(encoder, sequences, sizes, repeats)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,500,1000,2000,6000",
                        help="padded tokens per batch, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lines", type=int, default=20000, help="for the shipped model")
    parser.add_argument("--sentences", type=int, default=800, help="for the LASER1 shape")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rows = shipped_model_rows(sizes, args.repeats, args.lines)
    rows += laser1_shape_rows(sizes, args.repeats, args.sentences)
    print(f"sentences/s by padded tokens per batch, {os.cpu_count()} cores, one batch per core, "
          f"best of {args.repeats}")
    print("| model | " + " | ".join(f"{size:,}" for size in sizes) + " |")
    print("| --- |" + " ---: |" * len(sizes))
    for name, rates in rows:
        fastest = max(rates.values())
        cells = (f"**{rate:,.0f}**" if rate == fastest else f"{rate:,.0f}"
                 for rate in rates.values())
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
