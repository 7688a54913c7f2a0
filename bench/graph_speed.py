#!/usr/bin/env python3
"""Build time of `laser knn graph`, exact (blocked) against a FAISS index, and the FAISS graph's
recall of the exact neighbours, on clustered random vectors.

Rows are drawn around random centres (a few hundred rows per centre, Gaussian noise), so every row
has real near neighbours, as sentences of a corpus do; pure noise in 640 dimensions has none.

    python bench/graph_speed.py [--rows 100000] [--dim 640] [--k 10] [--index IVF1024,Flat]
                                [--nprobe 16]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from laser.apps.graph import knn_graph
from laser.search.approximate import ApproximateSearch
from laser.search.vectors import Vectors


def clustered_rows(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, rows // 300), dim), dtype=np.float32)
    owners = rng.integers(0, len(centres), rows)
    return centres[owners] + 0.8 * rng.standard_normal((rows, dim), dtype=np.float32)


def timed(build):
    """The result, and the wall-clock and CPU seconds (all threads) it took: on a shared machine
    the CPU seconds are the steadier figure."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = build()
    return result, f"{time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU"


def recall(found, truth) -> float:
    """Share of the exact graph's edges that the other graph has too."""
    hits = sum(len(set(found.indices[found.indptr[i]:found.indptr[i + 1]])
                   & set(truth.indices[truth.indptr[i]:truth.indptr[i + 1]]))
               for i in range(truth.shape[0]))
    return hits / truth.nnz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=640)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--index", default="IVF1024,Flat")
    parser.add_argument("--nprobe", type=int, default=16)
    args = parser.parse_args()
    vectors = Vectors(clustered_rows(args.rows, args.dim))
    exact, exact_time = timed(lambda: knn_graph(vectors, args.k))
    print(f"exact: {args.rows} x {args.dim}, k={args.k}: {exact_time}", flush=True)
    approximate = ApproximateSearch(args.index, args.nprobe)
    faiss_graph, faiss_time = timed(lambda: knn_graph(vectors, args.k, approximate))
    print(f"{args.index} nprobe {args.nprobe}: {faiss_time}, "
          f"recall of the exact edges {recall(faiss_graph, exact):.4f}")


if __name__ == "__main__":
    main()
