"""From scored candidates to pairs: the official retrieval modes fwd, bwd, intersect and max."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LaserError
from .corpus import Corpus
from .margins import Candidates

RETRIEVALS = ("fwd", "bwd", "max", "intersect")


@dataclass
class Pairs:
    """Result rows: source index, target index and score (sentence or line indices)."""

    src: np.ndarray
    trg: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.src)

    def best_first(self) -> "Pairs":
        """Sorted by decreasing score; equal scores keep their order."""
        order = np.argsort(-self.score, kind="stable")
        return Pairs(self.src[order], self.trg[order], self.score[order])

    def to_lines(self, src: Corpus, trg: Corpus) -> "Pairs":
        """Sentence indices mapped to the first line holding each sentence."""
        return Pairs(src.first_line[self.src], trg.first_line[self.trg], self.score)


def retrieve(fwd: Candidates, bwd: Candidates, retrieval: str, threshold: float = 0.0) -> Pairs:
    """The mined pairs, best first. Only `max` applies the threshold (strictly), as officially."""
    fwd_best, fwd_score = fwd.best()
    bwd_best, bwd_score = bwd.best()
    sources, targets = np.arange(len(fwd_best)), np.arange(len(bwd_best))
    if retrieval == "fwd":
        return Pairs(sources, fwd_best, fwd_score).best_first()
    if retrieval == "bwd":
        return Pairs(bwd_best, targets, bwd_score).best_first()
    if retrieval == "intersect":
        mutual = bwd_best[fwd_best] == sources
        return Pairs(sources[mutual], fwd_best[mutual], fwd_score[mutual]).best_first()
    if retrieval == "max":
        both = Pairs(np.concatenate([sources, bwd_best]), np.concatenate([fwd_best, targets]),
                     np.concatenate([fwd_score, bwd_score])).best_first()
        return _greedy(both, threshold, len(sources), len(targets))
    raise LaserError(f"unknown retrieval {retrieval!r}; choose one of {', '.join(RETRIEVALS)}")


def _greedy(ranked: Pairs, threshold: float, sources: int, targets: int) -> Pairs:
    """Walk pairs best first, keeping those whose sentences are both still free, above threshold."""
    used_src = np.zeros(sources, dtype=bool)
    used_trg = np.zeros(targets, dtype=bool)
    kept = []
    for position, (s, t, score) in enumerate(zip(ranked.src.tolist(), ranked.trg.tolist(),
                                                 ranked.score.tolist())):
        if not score > threshold:
            break
        if not used_src[s] and not used_trg[t]:
            used_src[s] = used_trg[t] = True
            kept.append(position)
    kept = np.array(kept, dtype=np.int64)
    return Pairs(ranked.src[kept], ranked.trg[kept], ranked.score[kept])


def all_candidates(fwd: Candidates, bwd: Candidates, retrieval: str) -> Pairs:
    """Every candidate pair of the directions `retrieval` looks at, once each, best first."""
    parts = []
    if retrieval != "bwd":
        parts.append(fwd.pairs(source_side=True))
    if retrieval != "fwd":
        parts.append(bwd.pairs(source_side=False))
    src, trg, score = (np.concatenate(column) for column in zip(*parts))
    _, first = np.unique(src * len(bwd.ids) + trg, return_index=True)
    first.sort()
    return Pairs(src[first], trg[first], score[first]).best_first()
