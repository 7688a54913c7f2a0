"""Bitext mining with the semantics of the official `mine_bitexts.py`: margin scores over k-NN
neighbourhoods in both directions, the four retrieval modes, --unify, and its three output modes."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..search.knn import (ApproximateSearch, Neighbours, Vectors, approximate_knn, exact_knn,
                  line_texts)
from ..io.text import STDIN, atomic_text_output, read_lines

MARGINS = ("ratio", "distance", "absolute")
RETRIEVALS = ("fwd", "bwd", "max", "intersect")
MODES = ("search", "score", "mine")
OUTPUT_FORMATS = ("tsv", "ids", "jsonl")


@dataclass
class Corpus:
    """A sentence file read once: the distinct sentence of each line (all, unless unified)."""

    path: str
    line_sentence: np.ndarray
    first_line: np.ndarray
    embedding_row: np.ndarray

    @property
    def lines(self) -> int:
        return len(self.line_sentence)

    @property
    def sentences(self) -> int:
        return len(self.first_line)


def scan_corpus(path: str, unify: bool = False, legacy_line_map: bool = False) -> Corpus:
    """Count the lines of `path` (streamed); with `unify`, merge identical lines into one sentence.

    A merged sentence keeps the embedding of its last occurrence, as the official tool does;
    outputs refer to its first line. `legacy_line_map` (without `unify`) reproduces the official
    tool's defect of looking rows up by the rank of a line's first occurrence.
    """
    if path == STDIN:
        raise LaserError("sentence files are read twice: pass a file, not '-' (stdin)")
    digests = bytearray()
    lines = 0
    for line in read_lines(path):
        lines += 1
        if unify or legacy_line_map:
            digests += hashlib.blake2b(line.encode("utf-8"), digest_size=16).digest()
    if lines == 0:
        raise LaserError(f"{path}: empty corpus")
    every = np.arange(lines)
    if not digests:
        return Corpus(path, every, every, every)
    first, line_sentence = _first_occurrences(np.frombuffer(bytes(digests), dtype="S16"))
    if not unify:
        return Corpus(path, line_sentence, every, every)
    last = np.zeros(len(first), dtype=np.int64)
    np.maximum.at(last, line_sentence, every)
    return Corpus(path, line_sentence, first, last)


def _first_occurrences(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys numbered by first appearance: their first positions, and each key's number."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first)
    rank = np.empty_like(by_appearance)
    rank[by_appearance] = np.arange(len(first))
    return first[by_appearance], rank[inverse.ravel()]


def corpus_vectors(corpus: Corpus, embeddings: np.ndarray, name: str) -> Vectors:
    """The embeddings of each distinct sentence, after checking there is one row per line."""
    if embeddings.shape[0] != corpus.lines:
        raise LaserError(f"{corpus.path} has {corpus.lines} lines but {name} holds "
                         f"{embeddings.shape[0]} embeddings")
    rows = None if corpus.sentences == corpus.lines else corpus.embedding_row
    return Vectors(embeddings, name=name, rows=rows)


def margin(sims: np.ndarray, own_mean: np.ndarray, other_mean: np.ndarray, kind: str) -> np.ndarray:
    """Official margins of similarity a and mean neighbourhood b: a, a - b or a / b (float32)."""
    if kind not in MARGINS:
        raise LaserError(f"unknown margin {kind!r}; choose one of {', '.join(MARGINS)}")
    if kind == "absolute":
        return sims
    mean = (own_mean + other_mean) / np.float32(2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return sims / mean if kind == "ratio" else sims - mean


@dataclass
class Neighbourhoods:
    """k-NN of every source sentence among the targets (fwd) and of every target (bwd)."""

    fwd: Neighbours
    bwd: Neighbours

    @classmethod
    def compute(cls, x: Vectors, y: Vectors, k: int,
                approximate: Optional[ApproximateSearch] = None, progress: bool = False,
                precision: str = "auto") -> "Neighbourhoods":
        """Exact by default; through a FAISS index of each side when `approximate` is given."""
        if approximate:
            return cls(*approximate_knn(x, y, k, approximate, progress))
        return cls(*exact_knn(x, y, k, progress=progress, precision=precision))

    def candidates(self, kind: str) -> tuple["Candidates", "Candidates"]:
        """Margin scores of the fwd and bwd candidates."""
        fwd_mean, bwd_mean = self.fwd.mean(), self.bwd.mean()
        fwd = margin(self.fwd.sims, fwd_mean[:, None], bwd_mean[self.fwd.ids], kind)
        bwd = margin(self.bwd.sims, bwd_mean[:, None], fwd_mean[self.bwd.ids], kind)
        return Candidates(fwd, self.fwd.ids), Candidates(bwd, self.bwd.ids)


@dataclass
class Candidates:
    """Margin score of each of a sentence's k nearest neighbours on the other side."""

    scores: np.ndarray
    ids: np.ndarray

    def best(self) -> tuple[np.ndarray, np.ndarray]:
        """The best-scoring candidate of every sentence (the first one on ties) and its score."""
        column = self.scores.argmax(axis=1)
        rows = np.arange(len(column))
        return self.ids[rows, column], self.scores[rows, column]

    def pairs(self, source_side: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (src, trg, score) candidate; `source_side` when these rows are source sentences."""
        own = np.repeat(np.arange(len(self.ids)), self.ids.shape[1])
        other = self.ids.ravel()
        src, trg = (own, other) if source_side else (other, own)
        return src, trg, self.scores.ravel()


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


def mine(src: Corpus, trg: Corpus, x: Vectors, y: Vectors, mode: str = "mine", k: int = 4,
         kind: str = "ratio", retrieval: str = "max", threshold: float = 0.0,
         candidates: bool = False, approximate: Optional[ApproximateSearch] = None,
         progress: bool = False) -> Pairs:
    """What `laser mine` computes: pairs of line numbers with their scores, in output order."""
    if mode not in MODES:
        raise LaserError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if retrieval not in RETRIEVALS:
        raise LaserError(f"unknown retrieval {retrieval!r}; choose one of {', '.join(RETRIEVALS)}")
    found = Neighbourhoods.compute(x, y, k, approximate, progress)
    if mode == "score":
        return score_pairs(src, trg, x, y, found, kind)
    fwd, bwd = found.candidates(kind)
    if mode == "search":
        return search_pairs(src, trg, fwd)
    pairs = all_candidates(fwd, bwd, retrieval) if candidates else retrieve(fwd, bwd, retrieval,
                                                                           threshold)
    return pairs.to_lines(src, trg)


def _rows(pairs: Pairs, fmt: str, mode: str, src_text: dict, trg_text: dict) -> Iterator[str]:
    """Output lines: official TSV (score as the official tool prints it), ids, or JSON lines."""
    scores = pairs.score.tolist()
    for s, t, score in zip(pairs.src.tolist(), pairs.trg.tolist(), scores):
        if fmt == "ids":
            yield f"{score!r}\t{s}\t{t}\n"
        elif fmt == "jsonl":
            record = {"score": score if score == score else None, "src_line": s, "trg_line": t,
                      "src": src_text[s], "trg": trg_text[t]}
            yield json.dumps(record, ensure_ascii=False) + "\n"
        elif mode == "search":
            yield trg_text[t] + "\n"
        else:
            shown = repr(score) if mode == "mine" else str(np.float32(score))
            yield f"{shown}\t{src_text[s]}\t{trg_text[t]}\n"


def write_pairs(output: str, pairs: Pairs, src: Corpus, trg: Corpus, fmt: str = "tsv",
                mode: str = "mine") -> None:
    """Write `pairs` (line numbers) atomically; texts are read back from the corpora as needed."""
    if fmt not in OUTPUT_FORMATS:
        raise LaserError(f"unknown output format {fmt!r}; "
                         f"choose one of {', '.join(OUTPUT_FORMATS)}")
    needs_src = fmt == "jsonl" or (fmt == "tsv" and mode != "search")
    src_text = line_texts(src.path, pairs.src) if needs_src else {}
    trg_text = line_texts(trg.path, pairs.trg) if fmt != "ids" else {}
    with atomic_text_output(output) as out:
        out.writelines(_rows(pairs, fmt, mode, src_text, trg_text))
