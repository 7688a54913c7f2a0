"""The embeddings an alignment reads: each run of up to L consecutive sentences of a document
(an "overlap", as Vecalign calls them), its sentences joined by spaces and embedded once."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import LaserError

Embed = Callable[[list[str]], np.ndarray]  # sentences -> float32 rows, one per sentence


@dataclass(frozen=True)
class Overlaps:
    """`vectors[l - 1, i]`: the unit-length embedding of sentences i .. i+l-1 (zero where the
    document ends first), for l = 1 .. L; `chars`: each sentence's length in characters."""

    vectors: np.ndarray  # (L, n, dim) float32
    chars: np.ndarray  # (n,) int64

    def __len__(self) -> int:
        return self.vectors.shape[1]

    @property
    def longest(self) -> int:
        return self.vectors.shape[0]

    def run_chars(self, length: int, starts: np.ndarray) -> np.ndarray:
        """The characters of the runs of `length` sentences from `starts`, with the spaces
        that join them."""
        total = np.concatenate([[0], np.cumsum(self.chars)])
        return total[starts + length] - total[starts] + length - 1

    @classmethod
    def of(cls, vectors: np.ndarray, chars: np.ndarray) -> Overlaps:
        """Overlaps of precomputed `vectors` (L, n, dim), their rows scaled to unit length."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 3:
            raise LaserError(f"overlap vectors must be (runs, sentences, dim), not {vectors.shape}")
        norms = np.linalg.norm(vectors, axis=2, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return cls(vectors, np.asarray(chars, dtype=np.int64))


def runs(sentences: Sequence[str], longest: int) -> list[str]:
    """Every run of 1 .. `longest` consecutive sentences, joined by spaces, by length then start."""
    return [" ".join(sentences[start:start + length]) for length in range(1, longest + 1)
            for start in range(len(sentences) - length + 1)]


def embed_overlaps(sentences: Sequence[str], embed: Embed, longest: int) -> Overlaps:
    """The Overlaps of a document, each distinct run of sentences embedded once by `embed`."""
    n, longest = len(sentences), max(1, min(longest, len(sentences)))
    texts = runs(sentences, longest)
    distinct = list(dict.fromkeys(texts))
    rows = (np.asarray(embed(distinct), dtype=np.float32) if distinct
            else np.zeros((0, 1), dtype=np.float32))
    if rows.ndim != 2 or len(rows) != len(distinct):
        raise LaserError(f"the embedding function gave {rows.shape} for {len(distinct)} sentences")
    row_of = {text: number for number, text in enumerate(distinct)}
    vectors = np.zeros((longest, n, rows.shape[1]), dtype=np.float32)
    position = 0
    for length in range(1, longest + 1):
        count = n - length + 1
        chosen = [row_of[text] for text in texts[position:position + count]]
        vectors[length - 1, :count] = rows[chosen]
        position += count
    return Overlaps.of(vectors, np.array([len(sentence) for sentence in sentences]))
