"""Bitext mining with the semantics of the official `mine_bitexts.py`: search, score and mine
modes over margin-scored neighbourhoods, with --unify and the candidate dump."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..search.approximate import ApproximateSearch
from ..search.vectors import Vectors
from .corpus import Corpus
from .margins import MARGINS, Candidates, Neighbourhoods, margin
from .retrieval import RETRIEVALS, Pairs, all_candidates, retrieve

MODES = ("search", "score", "mine")


def aligned_similarities(x: Vectors, y: Vectors, src: np.ndarray, trg: np.ndarray,
                         batch: int = 16384) -> np.ndarray:
    """Cosine similarity of x[src[i]] and y[trg[i]] for every i (float32), in batches."""
    out = np.empty(len(src), dtype=np.float32)
    for start in range(0, len(src), batch):
        part = slice(start, start + batch)
        out[part] = (x.take(src[part]) * y.take(trg[part])).sum(axis=1)
    return out


def search_pairs(src: Corpus, trg: Corpus, fwd: Candidates) -> Pairs:
    """Mode search: every source line with its best target (by margin among its k candidates)."""
    best, score = fwd.best()
    sentence = src.line_sentence
    return Pairs(np.arange(src.lines), trg.first_line[best[sentence]], score[sentence])


def score_pairs(src: Corpus, trg: Corpus, x: Vectors, y: Vectors, found: Neighbourhoods,
                kind: str) -> Pairs:
    """Mode score: the margin score of line i with line i, up to the shorter file (as officially).

    Lines are reported by the first line holding their sentence (the line itself unless unified).
    """
    lines = min(src.lines, trg.lines)
    u, v = src.line_sentence[:lines], trg.line_sentence[:lines]
    sims = aligned_similarities(x, y, u, v)
    scores = margin(sims, found.fwd.mean()[u], found.bwd.mean()[v], kind)
    return Pairs(src.first_line[u], trg.first_line[v], scores)


@dataclass(frozen=True)
class MineOptions:
    """What `laser mine` computes: the mode, neighbourhood size k, margin, retrieval and its
    threshold, the candidate dump, and approximate k-NN (None: exact)."""

    mode: str = "mine"
    k: int = 4
    margin: str = "ratio"
    retrieval: str = "max"
    threshold: float = 0.0
    candidates: bool = False
    approximate: Optional[ApproximateSearch] = None

    def __post_init__(self) -> None:
        for name, value, choices in (("mode", self.mode, MODES), ("margin", self.margin, MARGINS),
                                     ("retrieval", self.retrieval, RETRIEVALS)):
            if value not in choices:
                raise LaserError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")
        if self.k < 1:
            raise LaserError("the number of neighbours k must be at least 1")
        if self.candidates and self.mode != "mine":
            raise LaserError("--candidates goes with --mode mine")


def mine(src: Corpus, trg: Corpus, x: Vectors, y: Vectors, options: MineOptions = MineOptions(),
         progress: bool = False) -> Pairs:
    """Pairs of line numbers with their scores, in output order, from vectors in memory (the
    Python API; `laser mine` runs `laser.distributed.mine_stages` over a work directory)."""
    found = Neighbourhoods.compute(x, y, options.k, options.approximate, progress)
    if options.mode == "score":
        return score_pairs(src, trg, x, y, found, options.margin)
    fwd, bwd = found.candidates(options.margin)
    if options.mode == "search":
        return search_pairs(src, trg, fwd)
    if options.candidates:
        pairs = all_candidates(fwd, bwd, options.retrieval)
    else:
        pairs = retrieve(fwd, bwd, options.retrieval, options.threshold)
    return pairs.to_lines(src, trg)
