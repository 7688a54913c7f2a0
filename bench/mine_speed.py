#!/usr/bin/env python3
"""Time `laser mine` (mode mine, max retrieval, ratio margin) on synthetic corpora of any size.

    python bench/mine_speed.py --src 50000 --trg 50000 [--dim 1024] [--precision float32]
    python bench/mine_speed.py --src 100000 --trg 100000 --index IVF1024,PQ64x4fs --nprobe 64 \
        --compare-exact

Writes the synthetic corpora to bench/out/ (streamed, so big sizes do not need RAM), then runs the
same library calls as the command, phase by phase, and prints wall times, peak memory, how many of
the planted parallel pairs were found, and the 1M x 1M figure extrapolated from the k-NN rate.
With --compare-exact, an approximate run is followed by exact mining of the same corpora, and the
share of the exact pairs that the approximate run also returned is printed.

    python bench/mine_speed.py --dev ../shared/data/corpus/dev --index IVF1024,PQ64x4fs --nprobe 64 \
        --compare-exact

mines real embeddings instead: the foreign sentences of the dev split (all languages, one pair per
distinct English sentence) against their English sentences shuffled, embedded with the default
model (or --model), the gold pairs being the dev alignment.
"""
from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path
from typing import TextIO

import numpy as np
from tqdm import tqdm

from laser.io.embeddings import EmbeddingWriter, open_embeddings
from laser.encoder import Encoder
from laser.mining.corpus import corpus_vectors, scan_corpus
from laser.mining.margins import Neighbourhoods
from laser.mining.output import write_pairs
from laser.mining.retrieval import retrieve
from laser.search.approximate import ApproximateSearch
from laser.search.exact import BLOCK_ROWS
from laser.training.corpus import find_pair_files, read_pairs

OUT = Path(__file__).resolve().parent / "out"
CHUNK = 20000


def base_rows(start: int, stop: int, dim: int) -> np.ndarray:
    """Rows start..stop of the shared base vectors, generated chunk by chunk (same both sides)."""
    first, last = start // CHUNK, (stop - 1) // CHUNK
    chunks = [np.random.default_rng([7, c]).standard_normal((CHUNK, dim), dtype=np.float32)
              for c in range(first, last + 1)]
    return np.concatenate(chunks)[start - first * CHUNK:stop - first * CHUNK]


def make_corpus(name: str, rows: int, dim: int, pairs: int, seed: int, offset: int,
                dtype: np.dtype = np.float32) -> tuple[str, str]:
    """Text and embeddings (stored as `dtype`): rows offset..offset+pairs hold the planted pair
    of base vector i."""
    kind = "" if np.dtype(dtype) == np.float32 else f"-{np.dtype(dtype).name}"
    stem = OUT / f"{name}-{rows}x{dim}-{pairs}pairs{kind}"
    text, embeddings = stem.with_suffix(".txt"), stem.with_suffix(".npy")
    if not embeddings.exists():
        rng = np.random.default_rng(seed)
        with EmbeddingWriter(embeddings, dim, dtype=dtype) as writer, open(text, "w") as lines:
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


def synthetic_corpora(args: argparse.Namespace) -> tuple[tuple[str, str], tuple[str, str],
                                                           np.ndarray]:
    """Synthetic source and target (text, embeddings), and each source's gold target line
    (-1: none)."""
    pairs = int(args.pairs * min(args.src, args.trg))
    source = make_corpus("src", args.src, args.dim, pairs, 1, 0)
    target = make_corpus("trg", args.trg, args.dim, pairs, 2, args.trg - pairs)
    gold = np.full(args.src, -1)
    gold[:pairs] = np.arange(pairs) + args.trg - pairs
    return source, target, gold


def embed_lines(encoder: Encoder, lines: list[str], lang: str, writer: EmbeddingWriter,
                text: TextIO) -> None:
    for start in range(0, len(lines), CHUNK):
        writer.write(encoder.encode(lines[start:start + CHUNK], lang))
    text.writelines(f"{line}\n" for line in lines)


def dev_corpora(dev: str, model: str | None) -> tuple[tuple[str, str], tuple[str, str],
                                                       np.ndarray]:
    """Dev foreign sentences, and their English sides shuffled; gold = the dev alignment. A pair
    whose English sentence an earlier pair has (FLORES sentences recur in many languages) is
    left out, so that every gold pair is one-to-one."""
    encoder = Encoder.load(model)
    src_txt, src_npy = OUT / "dev-src.txt", OUT / "dev-src.npy"
    trg_txt, trg_npy = OUT / "dev-trg.txt", OUT / "dev-trg.npy"
    english, seen = [], set()
    with EmbeddingWriter(src_npy, encoder.dim) as writer, open(src_txt, "w") as text:
        for pair_file in tqdm(find_pair_files(dev), desc="embedding dev", unit="lang"):
            pairs = [(f, e) for f, e in read_pairs(pair_file.path) if e not in seen]
            seen.update(e for _, e in pairs)
            if pairs:
                foreign, pivot = map(list, zip(*pairs))
                embed_lines(encoder, foreign, pair_file.lang, writer, text)
                english += pivot
    order = np.random.default_rng(3).permutation(len(english))
    with EmbeddingWriter(trg_npy, encoder.dim) as writer, open(trg_txt, "w") as text:
        embed_lines(encoder, [english[i] for i in order], "en", writer, text)
    gold = np.empty(len(english), dtype=np.int64)
    gold[order] = np.arange(len(english))
    return (str(src_txt), str(src_npy)), (str(trg_txt), str(trg_npy)), gold


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def gold_found(mined, gold: np.ndarray) -> int:
    """How many mined pairs are gold pairs."""
    return int((gold[mined.src] == mined.trg).sum())


def describe(approximate: ApproximateSearch | None) -> str:
    if approximate is None:
        return "exact k-NN"
    return (f"index {approximate.factory} nprobe {approximate.nprobe} "
            f"refine {approximate.refine}")


def compare_with_exact(mined, x, y, src, trg, k: int, precision: str, gold: np.ndarray) -> None:
    """Mine the same corpora exactly; print the share of its pairs the approximate run found."""
    start = time.perf_counter()
    found = Neighbourhoods.compute(x, y, k, None, progress=True, precision=precision)
    exact = retrieve(*found.candidates("ratio"), "max", 0.0).to_lines(src, trg)
    seconds = time.perf_counter() - start
    ours = set(zip(mined.src.tolist(), mined.trg.tolist()))
    reference = set(zip(exact.src.tolist(), exact.trg.tolist()))
    best = exact.score >= np.quantile(exact.score, 0.5)
    top = set(zip(exact.src[best].tolist(), exact.trg[best].tolist()))
    print(f"  exact mining of the same corpora: {seconds:.1f} s, {len(reference)} pairs "
          f"({gold_found(exact, gold)} gold); "
          f"{100 * len(ours & reference) / len(reference):.2f}% of them found approximately "
          f"({100 * len(ours & top) / len(top):.2f}% of the better-scoring half)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=int, default=20000, help="source sentences")
    parser.add_argument("--trg", type=int, default=20000, help="target sentences")
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--pairs", type=float, default=0.5, help="share of sources with a pair")
    parser.add_argument("-k", type=int, default=4)
    parser.add_argument("--index", default=None, help="FAISS factory for approximate k-NN")
    parser.add_argument("--nprobe", type=int, default=None)
    parser.add_argument("--refine", type=int, default=4,
                        help="the index proposes refine x k candidates, re-scored exactly")
    parser.add_argument("--compare-exact", action="store_true",
                        help="also mine exactly and report how many exact pairs were found")
    parser.add_argument("--dev", help="mine this dev split (XXX-eng.tsv.gz files) instead")
    parser.add_argument("--model", help="model embedding --dev (default: the shipped one)")
    parser.add_argument("--precision", default="auto", choices=["auto", "float32", "float16"],
                        help="exact k-NN products (float16: screened in half precision, re-scored)")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    corpora = dev_corpora(args.dev, args.model) if args.dev else synthetic_corpora(args)
    (src_txt, src_npy), (trg_txt, trg_npy), gold = corpora

    timings = {}
    start = time.perf_counter()
    src, trg = scan_corpus(src_txt), scan_corpus(trg_txt)
    x = corpus_vectors(src, open_embeddings(src_npy), src_npy)
    y = corpus_vectors(trg, open_embeddings(trg_npy), trg_npy)
    timings["read texts"] = time.perf_counter() - start
    start = time.perf_counter()
    approximate = ApproximateSearch(args.index, args.nprobe, args.refine) if args.index else None
    found = Neighbourhoods.compute(x, y, args.k, approximate, progress=True,
                                   precision=args.precision)
    timings["k-NN both directions"] = time.perf_counter() - start
    start = time.perf_counter()
    mined = retrieve(*found.candidates("ratio"), "max", 0.0).to_lines(src, trg)
    timings["margin scores + max retrieval"] = time.perf_counter() - start
    start = time.perf_counter()
    write_pairs(str(OUT / "mined.tsv"), mined, src, trg)
    timings["write pairs with text"] = time.perf_counter() - start

    total = sum(timings.values())
    print(f"mine {len(x)} x {len(y)} sentences, dim {x.dim}, k {args.k}, "
          f"{describe(approximate)}, precision {args.precision}")
    for phase, seconds in timings.items():
        print(f"  {phase:32s} {seconds:9.1f} s")
    print(f"  {'total':32s} {total:9.1f} s")
    print(f"  peak RSS {peak_rss_gib():.2f} GiB (mapped embedding pages included)")
    print(f"  {len(mined)} pairs written, {gold_found(mined, gold)} of the "
          f"{int((gold >= 0).sum())} gold pairs among them")
    if approximate and args.compare_exact:
        compare_with_exact(mined, x, y, src, trg, args.k, args.precision, gold)
    if not args.index:
        rows, cols = -(-len(x) // BLOCK_ROWS), -(-len(y) // BLOCK_ROWS)
        print(f"  {rows * cols} blocks of {BLOCK_ROWS}^2 similarities, {rows + cols - 1} of "
              "them the first of their row or column (computed in float32, costlier)")
        upper = timings["k-NN both directions"] * 1e12 / (len(x) * len(y))
        print(f"  EXTRAPOLATED to 1M x 1M (same dim) by n x m: {upper / 60:.0f} min k-NN (an upper "
              "bound: first blocks are a smaller share there)")


if __name__ == "__main__":
    main()
