"""From scored candidates to pairs: the official retrieval modes fwd, bwd, intersect and max.

Pairs are ranked through sorted runs: each shard of candidates becomes a run of records sorted
best first (NaN last; equal scores in the order the official tool's stable sort keeps), and the
runs are merged lazily (`heapq.merge`), so that retrieval streams whatever the number of shards.
One shard a direction is the in-memory case: the same code, one run each."""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from ..errors import LaserError
from .corpus import Corpus
from .margins import Candidates

RETRIEVALS = ("fwd", "bwd", "max", "intersect")
# A ranked record: sort key (NaN flag, -score, order: the position in the official tool's
# concatenation), then the pair. Tuples of these compare by key alone, `order` being unique.
RUN = np.dtype([("nan", "u1"), ("neg", "<f4"), ("order", "<i8"), ("src", "<i8"),
                ("trg", "<i8"), ("score", "<f4")])
READ_RECORDS = 4096
CHUNK_PAIRS = 65536


@dataclass
class Pairs:
    """Result rows: source index, target index and score (sentence or line indices)."""

    src: np.ndarray
    trg: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.src)

    def to_lines(self, src: Corpus, trg: Corpus) -> "Pairs":
        """Sentence indices mapped to the first line holding each sentence."""
        return Pairs(src.first_line[self.src], trg.first_line[self.trg], self.score)

    @classmethod
    def joined(cls, chunks: Iterable["Pairs"]) -> "Pairs":
        parts = list(chunks)
        if not parts:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
        return cls(*(np.concatenate(column) for column in
                     zip(*((part.src, part.trg, part.score) for part in parts))))


def ranked_run(src: np.ndarray, trg: np.ndarray, score: np.ndarray,
               order: np.ndarray) -> np.ndarray:
    """Candidate pairs as a run of RUN records, best first: decreasing score, NaN last, equal
    scores by `order`."""
    run = np.empty(len(src), dtype=RUN)
    nan = np.isnan(score)
    run["nan"], run["neg"], run["order"] = nan, np.where(nan, 0, -score), order
    run["src"], run["trg"], run["score"] = src, trg, score
    return run[np.lexsort((run["order"], run["neg"], run["nan"]))]


def best_run(best: np.ndarray, score: np.ndarray, first: int, source_side: bool,
             order_base: int = 0, keep: np.ndarray | None = None) -> np.ndarray:
    """The run of the best candidates of sentences first.. of one side (`source_side`: they are
    source sentences), ordered from `order_base`; `keep` selects some of them."""
    own = np.arange(first, first + len(best))
    src, trg = (own, best) if source_side else (best, own)
    if keep is not None:
        own, src, trg, score = own[keep], src[keep], trg[keep], score[keep]
    return ranked_run(src, trg, score, own + order_base)


def candidate_run(candidates: Candidates, first: int, source_side: bool, order_base: int = 0,
                  keep: np.ndarray | None = None) -> np.ndarray:
    """The run of every candidate of sentences first.. (each row's k in column order)."""
    width = candidates.ids.shape[1]
    own = np.repeat(np.arange(first, first + len(candidates.ids)), width)
    other = candidates.ids.ravel()
    order = order_base + own * width + np.tile(np.arange(width), len(candidates.ids))
    src, trg = (own, other) if source_side else (other, own)
    score = candidates.scores.ravel()
    if keep is not None:
        src, trg, score, order = src[keep], trg[keep], score[keep], order[keep]
    return ranked_run(src, trg, score, order)


def run_records(run: np.ndarray) -> Iterator[tuple]:
    """The records of a run (an array or a memory map) as tuples, read a block at a time."""
    for start in range(0, len(run), READ_RECORDS):
        yield from run[start:start + READ_RECORDS].tolist()


def merged(runs: Iterable[np.ndarray]) -> Iterator[tuple]:
    """The records of all runs, best first."""
    return heapq.merge(*(run_records(run) for run in runs))


def greedy(records: Iterable[tuple], threshold: float, sources: int,
           targets: int) -> Iterator[tuple[int, int, float]]:
    """Walk pairs best first, keeping those whose sentences are both still free, above threshold;
    which sentences are taken is two bitmaps, one bit a sentence of each side."""
    used_src, used_trg = bytearray((sources + 7) // 8), bytearray((targets + 7) // 8)
    for _nan, _neg, _order, s, t, score in records:
        if not score > threshold:
            break
        if used_src[s >> 3] >> (s & 7) & 1 or used_trg[t >> 3] >> (t & 7) & 1:
            continue
        used_src[s >> 3] |= 1 << (s & 7)
        used_trg[t >> 3] |= 1 << (t & 7)
        yield s, t, score


def pairs_of(records: Iterable[tuple]) -> Iterator[tuple[int, int, float]]:
    for _nan, _neg, _order, s, t, score in records:
        yield s, t, score


def chunked(pairs: Iterable[tuple[int, int, float]], size: int = CHUNK_PAIRS) -> Iterator[Pairs]:
    """(src, trg, score) tuples as Pairs of up to `size` rows."""
    chunk = []
    for pair in pairs:
        chunk.append(pair)
        if len(chunk) == size:
            yield _pairs(chunk)
            chunk = []
    if chunk:
        yield _pairs(chunk)


def _pairs(chunk: list[tuple[int, int, float]]) -> Pairs:
    src, trg, score = zip(*chunk)
    return Pairs(np.array(src, dtype=np.int64), np.array(trg, dtype=np.int64),
                 np.array(score, dtype=np.float32))


def check_retrieval(retrieval: str) -> None:
    if retrieval not in RETRIEVALS:
        raise LaserError(f"unknown retrieval {retrieval!r}; "
                         f"choose one of {', '.join(RETRIEVALS)}")


def retrieve(fwd: Candidates, bwd: Candidates, retrieval: str, threshold: float = 0.0) -> Pairs:
    """The mined pairs, best first. Only `max` applies the threshold (strictly), as officially."""
    check_retrieval(retrieval)
    fwd_best, fwd_score = fwd.best()
    bwd_best, bwd_score = bwd.best()
    runs = []
    if retrieval in ("fwd", "max"):
        runs.append(best_run(fwd_best, fwd_score, 0, True))
    if retrieval == "intersect":
        mutual = bwd_best[fwd_best] == np.arange(len(fwd_best))
        runs.append(best_run(fwd_best, fwd_score, 0, True, keep=mutual))
    if retrieval in ("bwd", "max"):
        runs.append(best_run(bwd_best, bwd_score, 0, False, len(fwd_best) * (retrieval == "max")))
    records = merged(runs)
    found = (greedy(records, threshold, len(fwd_best), len(bwd_best)) if retrieval == "max"
             else pairs_of(records))
    return Pairs.joined(chunked(found))


def all_candidates(fwd: Candidates, bwd: Candidates, retrieval: str) -> Pairs:
    """Every candidate pair of the directions `retrieval` looks at, once each, best first."""
    runs = []
    if retrieval != "bwd":
        runs.append(candidate_run(fwd, 0, True))
    if retrieval != "fwd":
        keep = None if retrieval == "bwd" else new_candidates(bwd, 0, fwd.ids)
        runs.append(candidate_run(bwd, 0, False, fwd.ids.size, keep))
    return Pairs.joined(chunked(pairs_of(merged(runs))))


def new_candidates(bwd: Candidates, first: int, fwd_ids) -> np.ndarray:
    """Which bwd candidates of targets first.. are not already fwd candidates (source s's fwd
    ids are `fwd_ids[s]`, an array or a memory-mapped view): the mask over their ravelled ids."""
    width = bwd.ids.shape[1]
    own = np.repeat(np.arange(first, first + len(bwd.ids)), width)
    sources = bwd.ids.ravel()
    listed = np.asarray(fwd_ids[sources])
    return ~(listed == own[:, None]).any(axis=1)
