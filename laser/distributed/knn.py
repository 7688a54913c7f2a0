"""k-NN in both directions on Ray, for mining: exact blockwise search by shards of query rows
(merged into the single-process result), or FAISS IVF indexes trained once on a seeded sample
and populated by shards with global ids. Workers open the embeddings from their file paths."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..io.embeddings import StackedRows
from ..search.approximate import ApproximateSearch, check_found, rescored
from ..search.exact import BLOCK_ROWS, exact_knn, merge_neighbours, resolve_precision
from ..search.index import add_rows, search, trained_index
from ..search.vectors import Neighbours, Vectors, check_same_dim
from .ray_runner import (RayOptions, default_workers, ray_result, ray_runtime, run_jobs,
                         start_actors, stop_actors)
from .work import pin_threads

SHARD_ROWS = 4 * BLOCK_ROWS


@dataclass(frozen=True)
class MappedMatrix:
    """A memory-mapped matrix file every node sees, as a worker maps it again."""

    path: str
    dtype: str
    shape: tuple[int, int]
    offset: int
    order: str

    @classmethod
    def of(cls, matrix: np.ndarray, name: str) -> "MappedMatrix":
        if not isinstance(matrix, np.memmap) or matrix.filename is None:
            raise LaserError(f"{name}: --ray reads embeddings from files every node sees")
        order = "F" if matrix.flags.f_contiguous and not matrix.flags.c_contiguous else "C"
        return cls(os.path.abspath(matrix.filename), matrix.dtype.str, matrix.shape,
                   matrix.offset, order)

    def open(self) -> np.memmap:
        return np.memmap(self.path, dtype=np.dtype(self.dtype), mode="r", offset=self.offset,
                         shape=self.shape, order=self.order)


@dataclass(frozen=True)
class SharedVectors:
    """`Vectors` whose matrix is one file, or several files' rows one after another
    (`StackedRows`), that every node sees: sent to workers as their paths."""

    parts: tuple[MappedMatrix, ...]
    name: str
    rows: Optional[np.ndarray]
    normalize: bool

    @classmethod
    def of(cls, vectors: Vectors) -> "SharedVectors":
        matrix = vectors.matrix
        matrices = matrix.parts if isinstance(matrix, StackedRows) else [matrix]
        parts = tuple(MappedMatrix.of(part, vectors.name) for part in matrices if len(part))
        return cls(parts, vectors.name, vectors.rows, vectors.normalize)

    def matrix(self) -> np.ndarray | StackedRows:
        if len(self.parts) == 1:
            return self.parts[0].open()
        return StackedRows([part.open() for part in self.parts],
                           [part.path for part in self.parts])

    def open(self, start: int = 0, stop: Optional[int] = None) -> Vectors:
        """The vectors, or those at positions start..stop of the selection."""
        rows = self.rows
        if start or stop is not None:
            every = np.arange(self.total_rows) if rows is None else rows
            rows = every[start:stop]
        return Vectors(self.matrix(), self.name, rows, self.normalize)

    @property
    def total_rows(self) -> int:
        return sum(part.shape[0] for part in self.parts)

    def __len__(self) -> int:
        return self.total_rows if self.rows is None else len(self.rows)


class KnnWorker:
    """A Ray actor's state for k-NN shards: threads pinned to the actor's CPUs."""

    def __init__(self, threads: int):
        pin_threads(threads)

    def exact(self, x: SharedVectors, y: SharedVectors, start: int, stop: int, k: int,
              block: int, precision: str) -> tuple[Neighbours, Neighbours]:
        """k-NN of x rows start..stop in y, and of y in those rows (ids counted from start)."""
        return exact_knn(x.open(start, stop), y.open(), k, block, precision=precision,
                         first_row=start)

    def train(self, base: SharedVectors, factory: str, metric: str,
              train_size: Optional[int]) -> bytes:
        import faiss
        index = trained_index(base.open(), factory, metric, train_size)
        return faiss.serialize_index(index).tobytes()

    def populate(self, trained: bytes, base: SharedVectors, start: int, stop: int) -> bytes:
        """The trained index holding base rows start..stop under their global ids."""
        import faiss
        index = faiss.deserialize_index(np.frombuffer(trained, dtype=np.uint8))
        add_rows(index, base.open(start, stop), first_id=start)
        return faiss.serialize_index(index).tobytes()

    def search(self, index_path: str, queries: SharedVectors, base: SharedVectors, start: int,
               stop: int, k: int, approximate: ApproximateSearch) -> Neighbours:
        """Index candidates of queries start..stop, re-scored with exact cosines."""
        import faiss
        part = queries.open(start, stop)
        candidates = search(faiss.read_index(index_path), part, k * approximate.refine,
                            nprobe=approximate.nprobe)
        return rescored(candidates, part, base.open(), k)


def _ranges(rows: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, rows)) for start in range(0, rows, size)]


def ray_knn(x: Vectors, y: Vectors, k: int, ray_options: RayOptions,
            approximate: Optional[ApproximateSearch] = None, precision: str = "auto",
            scratch: Optional[str] = None,
            block: int = BLOCK_ROWS) -> tuple[Neighbours, Neighbours]:
    """k-NN of x in y and of y in x on Ray, bit for bit as `exact_knn` (with the same `block`)
    or `approximate_knn` find them in one process; `scratch` (a directory every node sees)
    holds approximate indexes meanwhile."""
    if len(x) == 0 or len(y) == 0:
        raise LaserError("cannot search an empty set of embeddings")
    check_same_dim(x, y)
    shared_x, shared_y = SharedVectors.of(x), SharedVectors.of(y)
    with ray_runtime(ray_options.address):
        actors = start_actors(KnnWorker, default_workers(ray_options), ray_options)
        try:
            if approximate:
                return tuple(_approximate(actors, queries, base, k, approximate, ray_options,
                                          scratch)
                             for queries, base in ((shared_x, shared_y), (shared_y, shared_x)))
            return _exact(actors, shared_x, shared_y, k, ray_options, block,
                          resolve_precision(precision, x.dim, len(x) * len(y)))
        finally:
            stop_actors(actors)


def _exact(actors: list, x: SharedVectors, y: SharedVectors, k: int, ray_options: RayOptions,
           block: int, precision: str) -> tuple[Neighbours, Neighbours]:
    """Exact k-NN by shards of x rows: their fwd lists side by side, their bwd lists merged."""
    block = max(block, k)
    size = _shard_rows(ray_options, block)
    fwd_parts, bwd_parts = {}, []

    def done(rows: tuple[int, int], found: tuple[Neighbours, Neighbours]) -> None:
        fwd_parts[rows[0]] = found[0]
        bwd_parts.append((rows[0], found[1]))
    run_jobs(actors, _ranges(len(x), size),
             lambda actor, rows: actor.exact.remote(x, y, *rows, k, block, precision), done)
    fwd = [fwd_parts[start] for start in sorted(fwd_parts)]
    bwd = merge_neighbours(len(y), min(k, len(x)), bwd_parts)
    return Neighbours(np.concatenate([part.sims for part in fwd]),
                      np.concatenate([part.ids for part in fwd])), bwd


def _shard_rows(ray_options: RayOptions, block: int) -> int:
    """Rows per task: `shard_lines` (else SHARD_ROWS) in whole blocks of the exact search, so
    that every block product is the very one a single process computes."""
    size = ray_options.shard_lines or SHARD_ROWS
    return max(block, size - size % block)


def ray_build_index(vectors: Vectors, factory: str, metric: str, train_size: Optional[int],
                    ray_options: RayOptions):
    """`build_index` on Ray, for IVF indexes: the same index, trained and populated by workers."""
    with ray_runtime(ray_options.address):
        actors = start_actors(KnnWorker, default_workers(ray_options), ray_options)
        try:
            return _ray_index(SharedVectors.of(vectors), factory, actors, ray_options, metric,
                              train_size)
        finally:
            stop_actors(actors)


def _ray_index(base: SharedVectors, factory: str, actors: list, ray_options: RayOptions,
               metric: str = "cosine", train_size: Optional[int] = None):
    """An IVF index of `base`: trained once by one worker on the seeded sample `build_index`
    takes, populated by shards of rows under their global ids, merged in row order."""
    import faiss
    trained = ray_result(actors[0].train.remote(base, factory, metric, train_size))
    index = faiss.deserialize_index(np.frombuffer(trained, dtype=np.uint8))
    try:
        lists = faiss.extract_index_ivf(index)
    except RuntimeError:
        raise LaserError(f"--ray builds IVF indexes (IVF...,Flat or IVF...,PQ...), "
                         f"not {factory}") from None
    parts = {}
    run_jobs(actors, _ranges(len(base), ray_options.shard_lines or SHARD_ROWS),
             lambda actor, rows: actor.populate.remote(trained, base, *rows),
             lambda rows, part: parts.__setitem__(rows[0], part))
    for start in sorted(parts):
        part = faiss.deserialize_index(np.frombuffer(parts.pop(start), dtype=np.uint8))
        lists.merge_from(faiss.extract_index_ivf(part), 0)
    index.ntotal = lists.ntotal
    return index


def _approximate(actors: list, queries: SharedVectors, base: SharedVectors, k: int,
                 approximate: ApproximateSearch, ray_options: RayOptions,
                 scratch: Optional[str]) -> Neighbours:
    """One direction of `approximate_knn`: index `base`, search shards of `queries`."""
    import faiss
    index = _ray_index(base, approximate.factory, actors, ray_options)
    wanted = min(k, len(base))
    parts = {}
    with tempfile.TemporaryDirectory(prefix=".laser-index-", dir=scratch) as tmp:
        index_path = os.path.join(tmp, "base.index")
        faiss.write_index(index, index_path)
        del index
        run_jobs(actors, _ranges(len(queries), ray_options.shard_lines or SHARD_ROWS),
                 lambda actor, rows: actor.search.remote(index_path, queries, base, *rows, wanted,
                                                         approximate),
                 lambda rows, part: parts.__setitem__(rows[0], part))
    found = Neighbours(np.concatenate([parts[start].sims for start in sorted(parts)]),
                       np.concatenate([parts[start].ids for start in sorted(parts)]))
    check_found(found, approximate, base.name)
    return found


def ray_neighbourhoods(ray_options: RayOptions, k: int,
                       approximate: Optional[ApproximateSearch] = None,
                       scratch: Optional[str] = None, block: int = BLOCK_ROWS):
    """The `search` of `mine` that finds both neighbourhoods on Ray."""
    from ..mining.margins import Neighbourhoods

    def search(x: Vectors, y: Vectors) -> Neighbourhoods:
        return Neighbourhoods(*ray_knn(x, y, k, ray_options, approximate, scratch=scratch,
                                       block=block))
    return search
