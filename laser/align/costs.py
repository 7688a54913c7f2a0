"""What a bead costs the dynamic program: 1 - cosine of its two sides' embeddings, normalised
by the same sides' costs against random sentences of the other document (as Vecalign does, a
margin within the document pair), plus a penalty per sentence beyond 1-1 and a length term;
insertions and deletions cost a percentile of the random pairs' costs (calibrated on the pair)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .beads import AlignOptions
from .overlaps import Overlaps

FLOOR = 1e-6  # the least normaliser (a document of one repeated sentence)


@dataclass
class BeadCosts:
    """The costs of the beads of two documents' Overlaps under `options`."""

    src: Overlaps
    trg: Overlaps
    options: AlignOptions
    sizes: list[tuple[int, int]]

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.options.seed)
        self.src_norms = self._norms(self.src, self.trg, rng)
        self.trg_norms = self._norms(self.trg, self.src, rng)
        self.log_ratio = float(np.log((self.src.chars.mean() + 1) / (self.trg.chars.mean() + 1))
                               if len(self.src) and len(self.trg) else 0.0)
        self.skip = self._deletion_cost(rng)

    def _norms(self, side: Overlaps, other: Overlaps, rng: np.random.Generator) -> np.ndarray:
        """(L, n): each run's mean cost (1 - cosine) against random sentences of `other`."""
        if not len(side) or not len(other):
            return np.ones((side.longest, len(side)), dtype=np.float32)
        picks = rng.integers(0, len(other), self.options.samples)
        sample = other.vectors[0, picks]  # (samples, dim)
        return np.maximum(1 - (side.vectors @ sample.T).mean(axis=2), FLOOR)

    def _deletion_cost(self, rng: np.random.Generator) -> float:
        """The percentile of the costs of random 1-1 beads that an insertion or deletion costs:
        pairs away from the diagonal (a tenth of the target, or 2 sentences), where few
        translations lie, unless the documents are too short to have any."""
        n, m = len(self.src), len(self.trg)
        if not n or not m:
            return 1.0
        count = max(self.options.samples * 50, 1000)
        i, j = rng.integers(0, n, count), rng.integers(0, m, count)
        away = np.abs(j - (i + 0.5) * m / n) >= max(2.0, m / 10)
        if away.any():
            i, j = i[away], j[away]
        cosines = np.einsum("nd,nd->n", self.src.vectors[0, i], self.trg.vectors[0, j])
        costs = self.combine(cosines, 1, 1, i, j)
        return float(np.percentile(costs, self.options.deletion_percentile))

    def combine(self, cosines: np.ndarray, a: int, b: int, src_starts: np.ndarray,
                trg_starts: np.ndarray) -> np.ndarray:
        """The costs of beads of sizes (a, b) from these starts, given their sides' cosines:
        normalised, times a * b as Vecalign's, plus the size penalty and the length term."""
        norms = (self.src_norms[a - 1, src_starts] + self.trg_norms[b - 1, trg_starts]) / 2
        cost = (1 - cosines) / norms * (a * b) + self.options.size_penalty * (a + b - 2)
        if self.options.length_weight:
            ratio = np.log((self.src.run_chars(a, src_starts) + 1) /
                           (self.trg.run_chars(b, trg_starts) + 1))
            cost = cost + self.options.length_weight * np.abs(ratio - self.log_ratio)
        return cost

    def cells(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """(len(sizes), cells): the cost of each bead of `sizes` ending at each cell of a band
        whose row i spans columns lo[i] .. hi[i] (the cells row by row); inf where a bead does
        not fit."""
        cosines = self._cosines(lo, hi)
        widths = hi - lo + 1
        rows = np.repeat(np.arange(len(lo)), widths)
        columns = np.arange(widths.sum()) - np.repeat(np.cumsum(widths) - widths, widths) + lo[rows]
        costs = np.full(cosines.shape, np.inf, dtype=np.float32)
        for t, (a, b) in enumerate(self.sizes):
            fits = np.flatnonzero(np.isfinite(cosines[t]))
            if len(fits):
                costs[t, fits] = self.combine(cosines[t, fits], a, b, rows[fits] - a,
                                              columns[fits] - b)
        return costs

    def _cosines(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """(len(sizes), cells): the cosine of the two sides of each bead of `sizes` ending at
        each cell of the band (NaN where it does not fit), a row and a target size at a time:
        the target runs ending in a row are consecutive rows of one matrix."""
        out = np.full((len(self.sizes), int((hi - lo + 1).sum())), np.nan, dtype=np.float32)
        by_target = {b: [(t, a) for t, (a, size) in enumerate(self.sizes) if size == b and
                         a <= self.src.longest and b <= self.trg.longest]
                     for b in {b for _, b in self.sizes}}
        start = 0
        for i, (first, last) in enumerate(zip(lo.tolist(), hi.tolist())):
            for b, kinds in by_target.items():
                kinds = [(t, a) for t, a in kinds if a <= i]
                begin = max(first, b)
                if not kinds or begin > last:
                    continue
                sources = self.src.vectors[[a - 1 for _, a in kinds], [i - a for _, a in kinds]]
                block = self.trg.vectors[b - 1, begin - b:last - b + 1] @ sources.T
                out[[t for t, _ in kinds], start + begin - first:start + last - first + 1] = block.T
            start += last - first + 1
        return out

    def cosine(self, src: tuple[int, ...], trg: tuple[int, ...]) -> float:
        """The cosine of the two sides of a bead (0 for an insertion or a deletion)."""
        if not src or not trg:
            return 0.0
        src_run, trg_run = self.src.vectors[len(src) - 1], self.trg.vectors[len(trg) - 1]
        return float(src_run[src[0]] @ trg_run[trg[0]])
