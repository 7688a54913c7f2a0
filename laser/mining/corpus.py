"""A sentence file as the miner sees it: its lines, and with --unify its distinct sentences."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..errors import LaserError
from ..io.text import STDIN, read_lines
from ..search.vectors import Vectors

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
