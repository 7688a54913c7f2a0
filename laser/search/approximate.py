"""Approximate k-NN for huge corpora: a FAISS index of each side proposes candidates, and exact
cosines from the embeddings choose and score the neighbours."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from .index import build_index, search
from .vectors import Neighbours, Vectors, check_same_dim, pair_dots

RESCORE_BATCH = 2048


@dataclass(frozen=True)
class ApproximateSearch:
    """k-NN through a FAISS index of each side: the `factory` string, IVF lists visited per query,
    and how many times k candidates each index returns to be re-scored with exact cosines."""

    factory: str
    nprobe: Optional[int] = None
    refine: int = 4


def approximate_knn(x: Vectors, y: Vectors, k: int, approximate: ApproximateSearch,
                    progress: bool = False) -> tuple[Neighbours, Neighbours]:
    """k-NN of x in y and of y in x through a FAISS index of each side (for huge corpora)."""
    check_same_dim(x, y)
    return (approximate_neighbours(x, y, k, approximate, progress=progress),
            approximate_neighbours(y, x, k, approximate, progress=progress))


def approximate_neighbours(queries: Vectors, base: Vectors, k: int,
                           approximate: ApproximateSearch, exclude_self: bool = False,
                           progress: bool = False) -> Neighbours:
    """k-NN of `queries` in `base` through a FAISS index of `base`, re-scored exactly;
    `exclude_self`: the queries are the base rows, each one's own row is left out."""
    index = build_index(base, approximate.factory, "cosine", progress=progress)
    wanted = min(k, len(base) - exclude_self)
    candidates = search(index, queries, wanted * approximate.refine, nprobe=approximate.nprobe,
                        exclude_self=exclude_self, progress=progress)
    del index
    neighbours = rescored(candidates, queries, base, wanted)
    check_found(neighbours, approximate, base.name)
    return neighbours


def check_found(neighbours: Neighbours, approximate: ApproximateSearch, base_name: str) -> None:
    """Refuse results where the index proposed fewer than k candidates for some queries."""
    if (neighbours.ids < 0).any():
        raise LaserError(f"the {approximate.factory} index of {base_name} found fewer than k "
                         "neighbours for some sentences; raise --nprobe or use fewer lists")


def rescored(candidates: Neighbours, queries: Vectors, base: Vectors, k: int,
             batch: int = RESCORE_BATCH) -> Neighbours:
    """The best k of each query's candidates by exact cosine (lower id first on ties): an index
    with compressed codes then only decides which candidates are seen, never their scores."""
    sims = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    for start, block in queries.blocks(batch):
        rows = slice(start, start + len(block))
        part_sims, part_ids = _exact_scores(block, candidates.ids[rows], base)
        sims[rows], ids[rows] = part_sims[:, :k], part_ids[:, :k]
    return Neighbours(sims, ids)


def _exact_scores(queries: np.ndarray, ids: np.ndarray, base: Vectors) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """Exact similarities of each query row to its candidate ids (-1: none), sorted best first."""
    valid = ids >= 0
    wanted, slot = np.unique(ids[valid], return_inverse=True)
    vectors = base.take(wanted)
    rows = np.nonzero(valid)[0]
    sims = np.full(ids.shape, -np.inf, dtype=np.float32)
    sims[valid] = pair_dots(queries, vectors, rows, slot)
    order = np.lexsort((ids, -sims), axis=1)
    ids, sims = np.take_along_axis(ids, order, 1), np.take_along_axis(sims, order, 1)
    return sims, np.where(np.isfinite(sims), ids, -1)
