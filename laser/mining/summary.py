"""A one-line summary of mined pairs' scores: count, range and percentiles."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PERCENTILES = (5, 25, 50, 75, 95)


@dataclass(frozen=True)
class ScoreSummary:
    """Count of the scores, and min, percentiles and max of the finite ones (numpy's linear
    interpolation); `missing` counts the scores that are not finite."""

    count: int
    missing: int
    minimum: float
    percentiles: dict
    maximum: float

    @classmethod
    def of(cls, scores: np.ndarray, points: tuple = PERCENTILES) -> "ScoreSummary":
        scores = np.asarray(scores, dtype=np.float64)
        finite = scores[np.isfinite(scores)]
        if finite.size == 0:
            return cls(int(scores.size), int(scores.size), float("nan"),
                       {p: float("nan") for p in points}, float("nan"))
        values = np.percentile(finite, points).tolist()
        return cls(int(scores.size), int(scores.size - finite.size), float(finite.min()),
                   dict(zip(points, values)), float(finite.max()))

    def line(self) -> str:
        """`scores of N pairs: min A, p5 B, ..., max Z` (4 decimals)."""
        if self.count == self.missing:
            return f"scores of {self.count} pairs: none finite"
        parts = [f"min {self.minimum:.4f}"]
        parts += [f"p{p} {v:.4f}" for p, v in self.percentiles.items()]
        parts.append(f"max {self.maximum:.4f}")
        extra = f" ({self.missing} not finite)" if self.missing else ""
        return f"scores of {self.count} pairs{extra}: " + ", ".join(parts)
