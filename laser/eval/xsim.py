"""Similarity search error (xsim) of aligned sets, both ways and as an N x N matrix."""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, Optional, Sequence

import numpy as np

from ..errors import LaserError
from ..mining.margins import Candidates, Neighbourhoods
from ..search.vectors import Vectors

# (text file, language) -> context manager giving (embedding matrix, name)
Embedder = Callable[[str, str], AbstractContextManager]


def _misses(candidates: Candidates, texts: Optional[Sequence[str]]) -> np.ndarray:
    """Per row, whether its best candidate is not the row of the same index (nor, given the
    target texts, a row with the same text: duplicates in the target count as found)."""
    best, _ = candidates.best()
    rows = np.arange(len(best))
    wrong = best != rows
    if texts is not None:
        wrong &= np.array([texts[b] != texts[r] for b, r in zip(best.tolist(), rows.tolist())],
                          dtype=bool)
    return wrong


def xsim_misses(x: Vectors, y: Vectors, kind: str = "absolute", k: int = 4,
                x_texts: Optional[Sequence[str]] = None,
                y_texts: Optional[Sequence[str]] = None) -> tuple[np.ndarray, np.ndarray]:
    """Which rows xsim gets wrong from x to y and from y to x of two aligned sets (row i
    translates row i): two boolean arrays, for paired comparisons of two models
    (`laser.eval.paired`).

    `kind` absolute is the nearest neighbour by cosine; ratio/distance choose among the k
    nearest by margin, as the official xsim does.
    """
    if len(x) != len(y):
        raise LaserError(f"{x.name} holds {len(x)} rows but {y.name} holds {len(y)}: xsim needs "
                         "aligned sets")
    fwd, bwd = Neighbourhoods.compute(x, y, k).candidates(kind)
    return _misses(fwd, y_texts), _misses(bwd, x_texts)


def xsim_errors(x: Vectors, y: Vectors, kind: str = "absolute", k: int = 4,
                x_texts: Optional[Sequence[str]] = None,
                y_texts: Optional[Sequence[str]] = None) -> tuple[float, float]:
    """xsim error rates from x to y and from y to x (the means of `xsim_misses`)."""
    fwd, bwd = xsim_misses(x, y, kind, k, x_texts, y_texts)
    return float(fwd.mean()), float(bwd.mean())


def xsim_matrix(sets: Sequence[Vectors], kind: str = "absolute", k: int = 4,
                texts: Optional[Sequence[Sequence[str]]] = None) -> np.ndarray:
    """N x N errors, entry (i, j) searching set i in set j; NaN on the diagonal."""
    matrix = np.full((len(sets), len(sets)), np.nan)
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            matrix[i, j], matrix[j, i] = xsim_errors(
                sets[i], sets[j], kind, k, texts[i] if texts else None, texts[j] if texts else None)
    return matrix
