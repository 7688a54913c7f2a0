"""Embedding rows as search inputs (float32 blocks, normalised, validated) and k-NN results."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np

from ..errors import LaserError


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """Rows as float32, each divided by its L2 norm (zero rows stay zero)."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)


@dataclass
class Vectors:
    """Rows of an embedding matrix as float32 blocks, L2-normalised unless `normalize` is off.

    `rows`, when given, selects and orders the matrix rows used (mining with --unify keeps one
    row per distinct sentence).
    """

    matrix: np.ndarray
    name: str = "embeddings"
    rows: Optional[np.ndarray] = None
    normalize: bool = True

    def __len__(self) -> int:
        return self.matrix.shape[0] if self.rows is None else len(self.rows)

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    def block(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop (positions in this selection) as a fresh C-contiguous float32 array."""
        return self.take(np.arange(start, min(stop, len(self))))

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The rows at `positions` of this selection (sorted positions read a memory map best)."""
        import faiss
        rows = positions if self.rows is None else self.rows[positions]
        if len(rows) and rows[-1] - rows[0] == len(rows) - 1 and np.all(np.diff(rows) == 1):
            source = self.matrix[rows[0]:rows[-1] + 1]
        else:
            source = self.matrix[rows]
        block = np.array(source, dtype=np.float32, order="C")
        finite = np.isfinite(block).all(axis=1)
        if not finite.all():
            bad = int(rows[int(np.argmin(finite))])
            raise LaserError(f"{self.name}: embedding row {bad} (counted from 0, "
                             "as `ids` outputs count) holds NaN or infinity")
        if self.normalize:
            faiss.normalize_L2(block)
        return block

    def blocks(self, size: int) -> Iterator[tuple[int, np.ndarray]]:
        """(start, rows) over the whole selection, `size` rows at a time."""
        for start in range(0, len(self), size):
            yield start, self.block(start, start + size)


@dataclass
class Neighbours:
    """For each query row, its k nearest rows elsewhere: similarities best first, and their ids."""

    sims: np.ndarray
    ids: np.ndarray

    def mean(self) -> np.ndarray:
        """Mean similarity of each row's neighbourhood (float32, as the official tool has it)."""
        return self.sims.mean(axis=1)


def check_same_dim(x: Vectors, y: Vectors) -> None:
    """Refuse to compare two sets of vectors of different dimensions, in one line."""
    if x.dim != y.dim:
        raise LaserError(f"{x.name} has dimension {x.dim} but {y.name} has {y.dim}")


def pair_dots(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Float32 dot products of x[rows[i]] and y[cols[i]], in chunks."""
    out = np.empty(len(rows), dtype=np.float32)
    step = max(1, (1 << 22) // x.shape[1])
    for start in range(0, len(rows), step):
        part = slice(start, start + step)
        out[part] = (x[rows[part]] * y[cols[part]]).sum(axis=1)
    return out
