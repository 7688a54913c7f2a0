"""FAISS IVF indexes built on Ray (`laser knn build --ray`): trained once on a seeded sample and
populated by shards with global ids. Workers open the embeddings from their file paths.
(`laser mine --ray` runs its own stages' tasks: `laser.distributed.mine_stages`.)"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..io.embeddings import StackedRows
from ..search.exact import BLOCK_ROWS
from ..search.index import add_rows, trained_index
from ..search.vectors import Vectors
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

def _ranges(rows: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, rows)) for start in range(0, rows, size)]


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
    takes, populated by shards of rows under their global ids, merged in row order. Fast-scan
    lists (`...x4fs`) are populated by one task in row order, as `laser mine`'s index stage:
    FAISS's `merge_from` copies their blocks of 32 codes whole and corrupts them."""
    import faiss
    trained = ray_result(actors[0].train.remote(base, factory, metric, train_size))
    index = _deserialized(trained)
    try:
        lists = faiss.extract_index_ivf(index)
    except RuntimeError:
        raise LaserError(f"--ray builds IVF indexes (IVF...,Flat or IVF...,PQ...), "
                         f"not {factory}") from None
    if isinstance(faiss.downcast_index(lists), faiss.IndexIVFFastScan):
        return _deserialized(ray_result(actors[0].populate.remote(trained, base, 0, len(base))))
    parts = {}
    run_jobs(actors, _ranges(len(base), ray_options.shard_lines or SHARD_ROWS),
             lambda actor, rows: actor.populate.remote(trained, base, *rows),
             lambda rows, part: parts.__setitem__(rows[0], part))
    for start in sorted(parts):
        part = _deserialized(parts.pop(start))
        lists.merge_from(faiss.extract_index_ivf(part), 0)
    index.ntotal = lists.ntotal
    return index


def _deserialized(serialized: bytes):
    import faiss
    return faiss.deserialize_index(np.frombuffer(serialized, dtype=np.uint8))
