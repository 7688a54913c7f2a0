"""Probabilities that mean what they say: a language-ID model's scores mapped to calibrated
probabilities (temperature scaling, then a monotone map), fitted on held-out labelled lines and
kept beside the model file (`laser-lid.ftz` -> `laser-lid.calibration.json`); and the expected
calibration error that measures them."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from functools import cached_property
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


# The line lengths (in words: laser.lid.scripts.line_lengths) where each bucket of lengths
# starts; each bucket has its own temperature and map (a word alone is read otherwise than a
# sentence).
LENGTH_BUCKETS = (1, 2, 3, 4, 8)
MIN_BUCKET_LINES = 200  # a bucket with fewer fitting lines takes the calibration of all lines


@dataclass(frozen=True)
class Curve:
    """One bucket's calibration: the softmax of the scores (logits; with `hs`,
    log-probabilities) divided by `temperature`, over the labels a line's script allows, then
    the best labels' probabilities through the monotone piecewise-linear map through the points
    (`xs`, `ys`) where it has one."""

    temperature: float = 1.0
    xs: tuple[float, ...] = ()
    ys: tuple[float, ...] = ()


@dataclass(frozen=True)
class Calibration:
    """A model's calibrated probabilities, a curve for each bucket of line lengths: `curves[i]`
    for the lines of `starts[i]` words or more, up to the next bucket's start (a line of no
    words in the first)."""

    curves: tuple[Curve, ...] = (Curve(),)
    starts: tuple[int, ...] = (1,)
    about: dict = field(default_factory=dict, compare=False)  # how it was fitted, for people

    def top(self, scores: np.ndarray, k: int,
            lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The k best labels of each line [lines, k] and their calibrated probabilities (-1 and
        0 past a line's finite scores), the lines `lengths` words long; overwrites `scores`."""
        buckets = length_buckets(self.starts, lengths)
        temperatures, xs, ys = self._joined
        scores /= temperatures[buckets][:, None]
        labels, probabilities = softmax_top(scores, k)
        # every bucket's map at once: bucket b's on [2b, 2b + 1]
        probabilities = np.interp(probabilities + 2 * buckets[:, None], xs, ys).astype(np.float32)
        probabilities[labels < 0] = 0.0
        return labels, probabilities

    @cached_property
    def _joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The curves' temperatures, and their maps as one map: bucket b's points shifted by
        2b, each held at its ends over [0, 1] as np.interp holds it (no map: the identity)."""
        xs: list[float] = []
        ys: list[float] = []
        for bucket, curve in enumerate(self.curves):
            points = list(zip(curve.xs, curve.ys)) or [(0.0, 0.0), (1.0, 1.0)]
            points = [(0.0, points[0][1])] + points + [(1.0, points[-1][1])]
            xs += [2 * bucket + x for x, _ in points]
            ys += [y for _, y in points]
        return (np.array([curve.temperature for curve in self.curves], np.float32),
                np.array(xs), np.array(ys))

    def save(self, path: str | os.PathLike) -> None:
        """Written as JSON (atomically)."""
        with atomic_text_output(str(path)) as out:
            json.dump({"method": "temperature, monotone map, by line length in words",
                       "buckets": [{"from_words": start, "temperature": curve.temperature,
                                    "map": {"x": list(curve.xs), "y": list(curve.ys)}}
                                   for start, curve in zip(self.starts, self.curves)],
                       **self.about}, out, indent=1)
            out.write("\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Calibration":
        """Read from its JSON file (one written before the buckets, its `temperature` and
        `map` at the top: one bucket); a one-line error naming it when it is not one."""
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            buckets = data["buckets"] if "buckets" in data else [{"from_words": 1, **data}]
            starts = tuple(int(bucket["from_words"]) for bucket in buckets)
            curves = tuple(map(_curve, buckets))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise LaserError(f"{path}: not a language-ID calibration file ({error})") from None
        if not curves or list(starts) != sorted(set(starts)) or not all(
                curve.temperature > 0 and len(curve.xs) == len(curve.ys)
                and list(curve.xs) == sorted(curve.xs) and list(curve.ys) == sorted(curve.ys)
                for curve in curves):
            raise LaserError(f"{path}: a calibration needs buckets of increasing lengths, each "
                             "with a positive temperature and a nondecreasing map")
        about = {key: value for key, value in data.items()
                 if key not in ("method", "temperature", "map", "buckets")}
        return cls(curves, starts, about)


def length_buckets(starts: Sequence[int], lengths: np.ndarray) -> np.ndarray:
    """Each line's bucket (the index of its start in `starts`), by its length in words."""
    return np.maximum(np.searchsorted(starts, lengths, side="right") - 1, 0)


def _curve(bucket: dict) -> Curve:
    """A bucket of a calibration file as its curve."""
    points = bucket.get("map") or {}
    return Curve(float(bucket["temperature"]), tuple(map(float, points.get("x", ()))),
                 tuple(map(float, points.get("y", ()))))


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
    allows (others -inf) [lines, labels], its gold label's index and its length in words."""

    scores: np.ndarray  # float32
    gold: np.ndarray  # int64
    lengths: np.ndarray  # int64

    def part(self, rows: np.ndarray) -> "Scored":
        return Scored(self.scores[rows], self.gold[rows], self.lengths[rows])


@dataclass(frozen=True)
class FitOptions:
    """How a calibration is fitted: with the monotone map or the temperature alone, over which
    buckets of line lengths (their starts: LENGTH_BUCKETS; (1,) for one curve of every line),
    and the fewest lines of a bucket fitted on its own (the others take the curve of all
    lines)."""

    monotone: bool = True
    starts: tuple[int, ...] = LENGTH_BUCKETS
    min_lines: int = MIN_BUCKET_LINES


def fit_calibration(scored: Scored, options: FitOptions = FitOptions()) -> Calibration:
    """For each bucket of line lengths, the temperature that minimises its lines' gold labels'
    negative log-likelihood, then (with `monotone`) the nondecreasing map of the tempered best
    probability to the share of right answers (isotonic regression over MAP_BINS groups of
    lines); a bucket of fewer than `min_lines` lines gets the curve of all lines."""
    if not len(scored.gold):
        raise LaserError("no lines to fit the calibration on: none is labelled with a label "
                         "of the model that its script allows")
    buckets = length_buckets(options.starts, scored.lengths)
    pooled: Optional[Curve] = None
    curves = []
    for bucket in range(len(options.starts)):
        rows = np.flatnonzero(buckets == bucket)
        if len(rows) >= options.min_lines:
            curves.append(_fit_curve(scored.part(rows), options.monotone))
            continue
        if pooled is None:
            pooled = _fit_curve(scored, options.monotone)
        curves.append(pooled)
    return Calibration(tuple(curves), options.starts)


def _fit_curve(scored: Scored, monotone: bool) -> Curve:
    """The temperature, then the map, of one bucket's lines."""
    temperature = _best_temperature(scored)
    if not monotone:
        return Curve(temperature)
    labels, probabilities = Calibration((Curve(temperature),)).top(
        scored.scores.copy(), 1, scored.lengths)
    return Curve(temperature, *isotonic_points(probabilities[:, 0], labels[:, 0] == scored.gold))


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
