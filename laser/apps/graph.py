"""k-NN graphs of a collection: each row's k most similar other rows (cosine), as a sparse CSR
matrix of scores saved in scipy's `.npz` format; exact (blocked) search, or a FAISS index for big
collections. The building block of deduplication and clustering. Graph files need scipy (the
`graph` extra); the neighbours alone (`self_neighbours`) do not."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import replace_atomically
from ..io.sidecar import write_sidecar
from ..optional import require
from ..search.approximate import ApproximateSearch, approximate_neighbours
from ..search.exact import exact_knn
from ..search.index import without_self
from ..search.vectors import Neighbours, Vectors

if TYPE_CHECKING:
    from scipy.sparse import csr_array


def self_neighbours(vectors: Vectors, k: int, approximate: Optional[ApproximateSearch] = None,
                    progress: bool = False) -> Neighbours:
    """Each row's k nearest other rows by cosine, best first (the lower id on ties); fewer
    when the collection has no k other rows. Exact unless `approximate` names a FAISS index."""
    if len(vectors) == 0:
        raise LaserError(f"{vectors.name}: no embeddings")
    if k < 1:
        raise LaserError("the number of neighbours k must be at least 1")
    if len(vectors) == 1:
        return Neighbours(np.empty((1, 0), dtype=np.float32), np.empty((1, 0), dtype=np.int64))
    if approximate:
        return approximate_neighbours(vectors, vectors, k, approximate, exclude_self=True,
                                      progress=progress)
    found, _ = exact_knn(vectors, vectors, k + 1, progress=progress)
    return without_self(found)


def neighbours_graph(found: Neighbours) -> csr_array:
    """The graph of k-NN results: row i holds i's neighbours (columns) and their cosines, best
    first; ids of -1 (no neighbour) are left out."""
    sparse = require("scipy.sparse", "a k-NN graph")
    rows = found.ids.shape[0]
    valid = found.ids >= 0
    indptr = np.concatenate([[0], np.cumsum(valid.sum(axis=1))])
    return sparse.csr_array((found.sims[valid], found.ids[valid], indptr), shape=(rows, rows))


def knn_graph(vectors: Vectors, k: int, approximate: Optional[ApproximateSearch] = None,
              progress: bool = False) -> csr_array:
    """The k-NN graph of a collection (cosine, self excluded) as a sparse CSR matrix of scores."""
    return neighbours_graph(self_neighbours(vectors, k, approximate, progress))


def save_graph(graph: csr_array, path: str | os.PathLike,
               provenance: Optional[dict] = None) -> None:
    """Write `graph` with scipy.sparse.save_npz (atomically) and, given, its PATH.json sidecar."""
    sparse = require("scipy.sparse", "a k-NN graph")

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            sparse.save_npz(f, graph)
    replace_atomically(path, write)
    if provenance is not None:
        write_sidecar(path, provenance)


def load_graph(path: str | os.PathLike) -> csr_array:
    """A graph written by `save_graph` (any scipy CSR `.npz`)."""
    sparse = require("scipy.sparse", "a k-NN graph")
    if not os.path.isfile(path):
        raise LaserError(f"{path}: no such graph file")
    try:
        return sparse.csr_array(sparse.load_npz(path))
    except (OSError, ValueError, KeyError) as error:
        raise LaserError(f"{path}: not a sparse matrix .npz file ({error})") from None
