"""Strict and lax precision, recall and F1 of alignments against gold ones, as Vecalign's scorer
defines them (after Bleualign's): a strict hit is a bead found exactly; a lax hit a bead whose
source sentences are aligned by the gold to one of its target sentences. Precision counts every
bead of the test (insertions and deletions too), recall every gold bead of sentences on both
sides."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

Pair = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Counts:
    strict: int = 0
    strict_misses: int = 0
    lax: int = 0
    lax_misses: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.strict + other.strict, self.strict_misses + other.strict_misses,
                      self.lax + other.lax, self.lax_misses + other.lax_misses)


@dataclass(frozen=True)
class AlignmentScores:
    precision_strict: float
    recall_strict: float
    f1_strict: float
    precision_lax: float
    recall_lax: float
    f1_lax: float


def hits(gold: Sequence[Pair], test: Sequence[Pair]) -> Counts:
    """The strict and lax hits and misses of the beads of `test` against `gold`."""
    gold_set = {(tuple(x), tuple(y)) for x, y in gold if x or y}
    linked: dict[int, set[int]] = defaultdict(set)
    for src, trg in gold_set:
        for i in src:
            linked[i].update(trg)
    strict = strict_misses = lax = lax_misses = 0
    for src, trg in {(tuple(x), tuple(y)) for x, y in test if x or y}:
        if (src, trg) in gold_set:
            strict, lax = strict + 1, lax + 1
            continue
        strict_misses += 1
        if set(trg) & set().union(*(linked[i] for i in src)):
            lax += 1
        else:
            lax_misses += 1
    return Counts(strict, strict_misses, lax, lax_misses)


def score_alignments(golds: Sequence[Sequence[Pair]],
                     tests: Sequence[Sequence[Pair]]) -> AlignmentScores:
    """The scores of several documents' alignments together (counts summed over documents)."""
    precision, recall = Counts(), Counts()
    for gold, test in zip(golds, tests, strict=True):
        precision += hits(gold, test)
        recall += hits([pair for pair in test if pair[0] and pair[1]],
                       [pair for pair in gold if pair[0] and pair[1]])
    p_strict = _ratio(precision.strict, precision.strict_misses)
    r_strict = _ratio(recall.strict, recall.strict_misses)
    p_lax = _ratio(precision.lax, precision.lax_misses)
    r_lax = _ratio(recall.lax, recall.lax_misses)
    return AlignmentScores(p_strict, r_strict, _f1(p_strict, r_strict),
                           p_lax, r_lax, _f1(p_lax, r_lax))


def _ratio(hit: int, miss: int) -> float:
    return hit / (hit + miss) if hit + miss else 0.0


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
