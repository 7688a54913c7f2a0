"""Margin scores over k-NN neighbourhoods in both directions (Artetxe & Schwenk, 2019), with the
float32 arithmetic of the official `mine_bitexts.py`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..search.approximate import ApproximateSearch, approximate_knn
from ..search.exact import exact_knn
from ..search.vectors import Neighbours, Vectors

MARGINS = ("ratio", "distance", "absolute")


def margin(sims: np.ndarray, own_mean: np.ndarray, other_mean: np.ndarray, kind: str) -> np.ndarray:
    """Official margins of similarity a and mean neighbourhood b: a, a - b or a / b (float32)."""
    if kind not in MARGINS:
        raise LaserError(f"unknown margin {kind!r}; choose one of {', '.join(MARGINS)}")
    if kind == "absolute":
        return sims
    mean = (own_mean + other_mean) / np.float32(2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return sims / mean if kind == "ratio" else sims - mean


@dataclass
class Neighbourhoods:
    """k-NN of every source sentence among the targets (fwd) and of every target (bwd)."""

    fwd: Neighbours
    bwd: Neighbours

    @classmethod
    def compute(cls, x: Vectors, y: Vectors, k: int,
                approximate: Optional[ApproximateSearch] = None, progress: bool = False,
                precision: str = "auto") -> "Neighbourhoods":
        """Exact by default; through a FAISS index of each side when `approximate` is given."""
        if approximate:
            return cls(*approximate_knn(x, y, k, approximate, progress))
        return cls(*exact_knn(x, y, k, progress=progress, precision=precision))

    def candidates(self, kind: str) -> tuple["Candidates", "Candidates"]:
        """Margin scores of the fwd and bwd candidates."""
        fwd_mean, bwd_mean = self.fwd.mean(), self.bwd.mean()
        fwd = margin(self.fwd.sims, fwd_mean[:, None], bwd_mean[self.fwd.ids], kind)
        bwd = margin(self.bwd.sims, bwd_mean[:, None], fwd_mean[self.bwd.ids], kind)
        return Candidates(fwd, self.fwd.ids), Candidates(bwd, self.bwd.ids)


@dataclass
class Candidates:
    """Margin score of each of a sentence's k nearest neighbours on the other side."""

    scores: np.ndarray
    ids: np.ndarray

    def best(self) -> tuple[np.ndarray, np.ndarray]:
        """The best-scoring candidate of every sentence (the first one on ties) and its score."""
        column = self.scores.argmax(axis=1)
        rows = np.arange(len(column))
        return self.ids[rows, column], self.scores[rows, column]

    def pairs(self, source_side: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (src, trg, score) candidate; `source_side` when these rows are source sentences."""
        own = np.repeat(np.arange(len(self.ids)), self.ids.shape[1])
        other = self.ids.ravel()
        src, trg = (own, other) if source_side else (other, own)
        return src, trg, self.scores.ravel()
