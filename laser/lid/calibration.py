"""Probabilities that mean what they say: a language-ID model's scores mapped to calibrated
probabilities (temperature scaling, then a monotone map), fitted on held-out labelled lines and
kept beside the model file (`laser-lid.ftz` -> `laser-lid.calibration.json`); and the expected
calibration error that measures them."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..text.languages import UNDETERMINED
from .predictor import softmax_top

SUFFIX = ".calibration.json"
ECE_BINS = 15  # equal-width bins of [0, 1]
MAP_BINS = 200  # the monotone map's fit: the lines' probabilities pooled in this many groups
TEMPERATURES = (0.02, 50.0)  # the search's bounds
SEARCH_STEPS = 80


@dataclass(frozen=True)
class Calibration:
    """A model's calibrated probabilities: the softmax of its scores (logits; with `hs`,
    log-probabilities) divided by `temperature`, over the labels a line's script allows, then
    the best labels' probabilities through the monotone piecewise-linear map through the
    points (`xs`, `ys`) where it has one."""

    temperature: float = 1.0
    xs: tuple[float, ...] = ()
    ys: tuple[float, ...] = ()
    about: dict = field(default_factory=dict, compare=False)  # how it was fitted, for people

    def top(self, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best labels of each line [lines, k] and their calibrated probabilities (-1 and
        0 past a line's finite scores); overwrites `scores`."""
        scores /= np.float32(self.temperature)
        labels, probabilities = softmax_top(scores, k)
        if self.xs:
            probabilities = np.where(labels >= 0, np.interp(probabilities, self.xs, self.ys),
                                     0).astype(np.float32)
        return labels, probabilities

    def save(self, path: str | os.PathLike) -> None:
        """Written as JSON (atomically)."""
        with atomic_text_output(str(path)) as out:
            json.dump({"method": "temperature" + (", monotone map" if self.xs else ""),
                       "temperature": self.temperature, "map": {"x": list(self.xs),
                                                                "y": list(self.ys)},
                       **self.about}, out, indent=1)
            out.write("\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Calibration":
        """Read from its JSON file; a one-line error naming it when it is not one."""
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            temperature = float(data["temperature"])
            points = data.get("map") or {}
            xs, ys = tuple(map(float, points.get("x", ()))), tuple(map(float, points.get("y", ())))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise LaserError(f"{path}: not a language-ID calibration file ({error})") from None
        if not temperature > 0 or len(xs) != len(ys) or list(xs) != sorted(xs) \
                or list(ys) != sorted(ys):
            raise LaserError(f"{path}: a calibration needs a positive temperature and a "
                             "nondecreasing map")
        about = {key: value for key, value in data.items()
                 if key not in ("method", "temperature", "map")}
        return cls(temperature, xs, ys, about)


def calibration_path(model_path: str | os.PathLike) -> Path:
    """Where a model's calibration is kept: `laser-lid.ftz` -> `laser-lid.calibration.json`."""
    path = Path(model_path)
    return path.with_name(path.stem + SUFFIX)


def read_calibration(model_path: str | os.PathLike) -> Optional[Calibration]:
    """The calibration kept beside a model file; None where it has none."""
    path = calibration_path(model_path)
    return Calibration.load(path) if path.is_file() else None


def expected_calibration_error(probabilities: Sequence[float], correct: Sequence[bool],
                               bins: int = ECE_BINS) -> float:
    """The expected calibration error of answers given these probabilities: the answers
    binned by probability into `bins` equal-width bins of [0, 1] (bin i holds [i/bins,
    (i+1)/bins), the last one 1 too), each bin's |accuracy - mean probability| weighted by
    its share of the answers (0 for no answers)."""
    probabilities = np.asarray(probabilities, np.float64)
    correct = np.asarray(correct, np.float64)
    if not len(probabilities):
        return 0.0
    index = np.minimum((probabilities * bins).astype(np.int64), bins - 1)
    counts = np.bincount(index, minlength=bins)
    gaps = np.abs(np.bincount(index, correct, bins) - np.bincount(index, probabilities, bins))
    return float(gaps.sum() / counts.sum())


def answers_error(codes: Sequence[Sequence[str]], probabilities: Sequence[Sequence[float]],
                  gold: Sequence[str], bins: int = ECE_BINS) -> tuple[float, int]:
    """The expected calibration error of a model's best answers (`Ranked`: each line's codes
    and probabilities) against the gold labels, over the lines it answered (not `und`), and how
    many it answered."""
    answered = [(line_probabilities[0], line_codes[0] == label)
                for line_codes, line_probabilities, label in zip(codes, probabilities, gold)
                if line_codes and line_codes[0] != UNDETERMINED]
    return (expected_calibration_error([p for p, _ in answered], [c for _, c in answered], bins),
            len(answered))


@dataclass(frozen=True)
class Scored:
    """The lines a calibration is fitted on: each line's scores over the labels its script
    allows (others -inf) [lines, labels], and its gold label's index."""

    scores: np.ndarray  # float32
    gold: np.ndarray  # int64


def fit_calibration(scored: Scored, monotone: bool = True) -> Calibration:
    """The temperature that minimises the gold labels' negative log-likelihood, then (with
    `monotone`) the nondecreasing map of the tempered best probability to the share of right
    answers (isotonic regression over MAP_BINS groups of lines)."""
    if not len(scored.gold):
        raise LaserError("no lines to fit the calibration on: none is labelled with a label "
                         "of the model that its script allows")
    temperature = _best_temperature(scored)
    if not monotone:
        return Calibration(temperature)
    labels, probabilities = Calibration(temperature).top(scored.scores.copy(), 1)
    xs, ys = isotonic_points(probabilities[:, 0], labels[:, 0] == scored.gold)
    return Calibration(temperature, xs, ys)


def negative_log_likelihood(scored: Scored, temperature: float) -> float:
    """The mean -log of the gold label's probability, the softmax of scores / temperature."""
    scaled = scored.scores.astype(np.float64) / temperature
    largest = scaled.max(axis=1, keepdims=True)
    total = np.log(np.exp(scaled - largest).sum(axis=1)) + largest[:, 0]
    gold = np.take_along_axis(scaled, scored.gold[:, None], axis=1)[:, 0]
    return float(np.mean(total - gold))


def _best_temperature(scored: Scored) -> float:
    """Golden-section search over log T (the likelihood is convex in 1/T)."""
    low, high = map(math.log, TEMPERATURES)
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(SEARCH_STEPS):
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        if negative_log_likelihood(scored, math.exp(left)) \
                <= negative_log_likelihood(scored, math.exp(right)):
            high = right
        else:
            low = left
    return math.exp((low + high) / 2)


def isotonic_points(probabilities: np.ndarray, correct: np.ndarray) -> tuple[tuple, tuple]:
    """The points of a nondecreasing map from probability to the share of right answers:
    the lines sorted by probability, pooled into MAP_BINS groups of equal size, then adjacent
    groups that break the order pooled (pool adjacent violators); a point a group, at its
    mean probability (groups of the same mean pooled too), and (0, 0) and (1, the last
    group's share) at the ends."""
    order = np.argsort(probabilities, kind="stable")
    groups = np.array_split(order, min(MAP_BINS, len(order)))
    blocks = [[float(probabilities[group].sum()), float(correct[group].sum()), len(group)]
              for group in groups if len(group)]
    pooled: list[list[float]] = []
    for block in blocks:
        pooled.append(block)
        while len(pooled) > 1 and _violates(pooled[-2], pooled[-1]):
            last = pooled.pop()
            pooled[-1] = [a + b for a, b in zip(pooled[-1], last)]
    xs = [round(total / count, 6) for total, _, count in pooled]
    ys = [round(right / count, 6) for _, right, count in pooled]
    if xs[0] > 0:  # from (0, 0), to (1, the last share): no answer below the first group's
        xs, ys = [0.0] + xs, [0.0] + ys
    if xs[-1] < 1:
        xs, ys = xs + [1.0], ys + [ys[-1]]
    return tuple(xs), tuple(ys)


def _violates(before: list[float], after: list[float]) -> bool:
    """Whether two adjacent groups (probability sum, right answers, lines) must be pooled."""
    return (before[1] / before[2] >= after[1] / after[2]
            or round(before[0] / before[2], 6) >= round(after[0] / after[2], 6))
