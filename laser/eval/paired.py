"""Is one model's error on a test set really lower than another's? The exact McNemar test on the
queries the two models disagree about (each query answered by both, right or wrong)."""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from ..errors import LaserError


@dataclass(frozen=True)
class PairedComparison:
    """Two models' misses on the same queries: the change in error rate and its significance."""

    queries: int
    baseline_errors: int
    model_errors: int
    only_baseline_wrong: int  # queries the model gets right and the baseline wrong
    only_model_wrong: int

    @classmethod
    def of(cls, baseline_misses: np.ndarray, model_misses: np.ndarray) -> "PairedComparison":
        baseline, model = np.asarray(baseline_misses, bool), np.asarray(model_misses, bool)
        if baseline.shape != model.shape:
            raise LaserError(f"paired comparison of {baseline.size} and {model.size} queries: "
                             "both models must answer the same queries")
        return cls(int(baseline.size), int(baseline.sum()), int(model.sum()),
                   int((baseline & ~model).sum()), int((model & ~baseline).sum()))

    @property
    def baseline_error(self) -> float:
        """The baseline's error rate in %."""
        return 100 * self.baseline_errors / max(1, self.queries)

    @property
    def model_error(self) -> float:
        """The model's error rate in %."""
        return 100 * self.model_errors / max(1, self.queries)

    @property
    def change(self) -> float:
        """Model error minus baseline error, in points (negative: the model is better)."""
        return 100 * (self.model_errors - self.baseline_errors) / max(1, self.queries)

    @property
    def p_value(self) -> float:
        """Two-sided exact McNemar p-value: how likely a split of the disagreements at least this
        uneven is when neither model is better."""
        return mcnemar_exact(self.only_baseline_wrong, self.only_model_wrong)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test of b against c discordant pairs (binomial, p = 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)
