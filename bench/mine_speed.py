#!/usr/bin/env python3
"""Time `laser mine` (mode mine, max retrieval, ratio margin) on synthetic corpora of any size.

    python bench/mine_speed.py --src 50000 --trg 50000 [--dim 1024] [--precision float32]
    python bench/mine_speed.py --src 100000 --trg 100000 --index IVF1024,Flat --nprobe 16

Writes the synthetic corpora to bench/out/ (streamed, so big sizes do not need RAM), then runs the
same library calls as the command, phase by phase, and prints wall times, peak memory, how many of
the planted parallel pairs were found, and the 1M x 1M figure extrapolated from the k-NN rate.
"""
from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from laser.embedding_io import EmbeddingWriter, open_embeddings
from laser.knn import BLOCK_ROWS
from laser.mining import Neighbourhoods, corpus_vectors, retrieve, scan_corpus, write_pairs

OUT = Path(__file__).resolve().parent / "out"
CHUNK = 20000


def base_rows(start: int, stop: int, dim: int) -> np.ndarray:
    """Rows start..stop of the shared base vectors, generated chunk by chunk (same both sides)."""
    first, last = start // CHUNK, (stop - 1) // CHUNK
    chunks = [np.random.default_rng([7, c]).standard_normal((CHUNK, dim), dtype=np.float32)
              for c in range(first, last + 1)]
    return np.concatenate(chunks)[start - first * CHUNK:stop - first * CHUNK]


def make_corpus(name: str, rows: int, dim: int, pairs: int, seed: int,
                offset: int) -> tuple[str, str]:
    """Text and embeddings: rows offset..offset+pairs hold the planted pair of base vector i."""
    stem = OUT / f"{name}-{rows}x{dim}-{pairs}pairs"
    text, embeddings = stem.with_suffix(".txt"), stem.with_suffix(".npy")
    if not embeddings.exists():
        rng = np.random.default_rng(seed)
        with EmbeddingWriter(embeddings, dim) as writer, open(text, "w") as lines:
            for start in range(0, rows, CHUNK):
                stop = min(start + CHUNK, rows)
                block = rng.standard_normal((stop - start, dim), dtype=np.float32)
                planted = np.arange(start, stop) - offset
                hit = (planted >= 0) & (planted < pairs)
                if hit.any():
                    base = base_rows(planted[hit][0], planted[hit][-1] + 1, dim)
                    block[hit] = base + 0.6 * block[hit]
                writer.write(block)
                lines.writelines(f"{name} {i}\n" for i in range(start, stop))
    return str(text), str(embeddings)


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=int, default=20000, help="source sentences")
    parser.add_argument("--trg", type=int, default=20000, help="target sentences")
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--pairs", type=float, default=0.5, help="share of sources with a pair")
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--index", default=None, help="FAISS factory for approximate k-NN")
    parser.add_argument("--nprobe", type=int, default=None)
    parser.add_argument("--precision", default="auto", choices=["auto", "float32", "float16"],
                        help="exact k-NN products (float16: screened in half precision, re-scored)")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    pairs = int(args.pairs * min(args.src, args.trg))
    src_txt, src_npy = make_corpus("src", args.src, args.dim, pairs, 1, 0)
    trg_txt, trg_npy = make_corpus("trg", args.trg, args.dim, pairs, 2, args.trg - pairs)

    timings = {}
    start = time.perf_counter()
    src, trg = scan_corpus(src_txt), scan_corpus(trg_txt)
    x = corpus_vectors(src, open_embeddings(src_npy), src_npy)
    y = corpus_vectors(trg, open_embeddings(trg_npy), trg_npy)
    timings["read texts"] = time.perf_counter() - start
    start = time.perf_counter()
    found = Neighbourhoods.compute(x, y, args.k, args.index, args.nprobe, progress=True,
                                   precision=args.precision)
    timings["k-NN both directions"] = time.perf_counter() - start
    start = time.perf_counter()
    mined = retrieve(*found.candidates("ratio"), "max", 0.0).to_lines(src, trg)
    timings["margin scores + max retrieval"] = time.perf_counter() - start
    start = time.perf_counter()
    write_pairs(str(OUT / "mined.tsv"), mined, src, trg)
    timings["write pairs with text"] = time.perf_counter() - start

    planted = mined.trg - mined.src == args.trg - pairs
    total = sum(timings.values())
    print(f"mine {args.src} x {args.trg} sentences, dim {args.dim}, k {args.k}, "
          f"{'index ' + args.index + f' nprobe {args.nprobe}' if args.index else 'exact k-NN'}, "
          f"precision {args.precision}")
    for phase, seconds in timings.items():
        print(f"  {phase:32s} {seconds:9.1f} s")
    print(f"  {'total':32s} {total:9.1f} s")
    print(f"  peak RSS {peak_rss_gib():.2f} GiB (mapped embedding pages included)")
    print(f"  {len(mined)} pairs written, {int(planted.sum())} of the {pairs} planted pairs "
          "among them")
    if not args.index:
        rows, cols = -(-args.src // BLOCK_ROWS), -(-args.trg // BLOCK_ROWS)
        print(f"  {rows * cols} blocks of {BLOCK_ROWS}^2 similarities, {rows + cols - 1} of "
              "them the first of their row or column (computed in float32, costlier)")
        upper = timings["k-NN both directions"] * 1e12 / (args.src * args.trg)
        print(f"  EXTRAPOLATED to 1M x 1M (same dim) by n x m: {upper / 60:.0f} min k-NN (an upper "
              "bound: first blocks are a smaller share there)")


if __name__ == "__main__":
    main()
