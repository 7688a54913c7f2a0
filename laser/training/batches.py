"""Training batches: token-id arrays read by memory map, languages drawn by temperature, pairs of
similar length batched together. Batch `step` depends only on (seed, step), so a resumed run sees
exactly the batches an uninterrupted one would."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np
import torch

from ..models.sequences import EOS, pad_batch
from .prepare import language_weights
from .topics import TopicGrouping, group_by_topic


@dataclass(frozen=True)
class TokenArrays:
    """Sentences stored as one flat token array plus offsets (n + 1)."""

    tokens: np.ndarray
    offsets: np.ndarray

    @classmethod
    def load(cls, path_stem: Path) -> "TokenArrays":
        return cls(np.load(f"{path_stem}.tokens.npy", mmap_mode="r"),
                   np.load(f"{path_stem}.offsets.npy"))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def sentence(self, index: int, max_length: int) -> list[int]:
        """Ids of one sentence ending in </s>, cut to at most max_length tokens."""
        start, stop = int(self.offsets[index]), int(self.offsets[index + 1])
        ids = self.tokens[start:stop].tolist()
        return ids if len(ids) <= max_length else ids[: max_length - 1] + [EOS]


@dataclass(frozen=True)
class LanguagePairs:
    lang: str
    source: TokenArrays
    pivot: TokenArrays
    teacher_rows: Optional[np.ndarray] = None  # each pair's English sentence in the teacher cache

    def __len__(self) -> int:
        return len(self.source)


def load_pairs(directory: Path, languages: Sequence[str]) -> list[LanguagePairs]:
    return [LanguagePairs(lang, TokenArrays.load(directory / f"{lang}.src"),
                          TokenArrays.load(directory / f"{lang}.eng")) for lang in languages]


@dataclass
class Batch:
    tokens: torch.Tensor      # (2B, T): the B foreign sentences, then their B English sides
    lengths: torch.Tensor     # (2B,)
    duplicate: torch.Tensor   # (B, B) bool: pairs i != j sharing a side (not negatives)
    languages: list[str]
    teacher_rows: Optional[np.ndarray] = None  # (B,) teacher-cache rows when distilling

    @property
    def size(self) -> int:
        return len(self.languages)


class BatchSampler:
    """Batch number `step` of an endless stream: languages ~ size**alpha, length-bucketed, and
    with `topics` grouped by the teacher's clusters of the English sides (topics.py)."""

    def __init__(self, pairs: Sequence[LanguagePairs], batch_size: int, alpha: float, seed: int,
                 max_length: int, pool_batches: int = 64, topics: Optional[TopicGrouping] = None):
        self.pairs = list(pairs)
        weights = language_weights({p.lang: len(p) for p in self.pairs}, alpha)
        self.probabilities = np.array([weights[p.lang] for p in self.pairs])
        self.sizes = np.array([len(p) for p in self.pairs])
        self.lengths = [np.maximum(p.source.lengths, p.pivot.lengths) for p in self.pairs]
        self.batch_size, self.seed, self.max_length = batch_size, seed, max_length
        self.pool_batches, self.topics = pool_batches, topics
        self._pool: tuple[int, np.ndarray] | None = None

    def _draw_pool(self, pool: int) -> np.ndarray:
        """(pool_batches, batch_size, 2) language and pair indices, each batch of similar length."""
        rng = np.random.default_rng([self.seed, pool])
        count = self.pool_batches * self.batch_size
        languages = rng.choice(len(self.pairs), size=count, p=self.probabilities)
        rows = (rng.random(count) * self.sizes[languages]).astype(np.int64)
        lengths = np.array([self.lengths[lang][row] for lang, row in zip(languages, rows)])
        order = np.lexsort((rng.random(count), lengths))
        if self.topics is not None:
            english = self._teacher_rows(np.stack([languages, rows], axis=1))
            order = group_by_topic(order, np.minimum(lengths, self.max_length),
                                   self.topics.labels[english], english,
                                   self.topics.band_batches * self.batch_size)
        drawn = np.stack([languages[order], rows[order]], axis=1)
        batches = drawn.reshape(self.pool_batches, self.batch_size, 2)
        return batches[rng.permutation(self.pool_batches)]

    def indices(self, step: int) -> np.ndarray:
        pool = step // self.pool_batches
        if self._pool is None or self._pool[0] != pool:
            self._pool = (pool, self._draw_pool(pool))
        return self._pool[1][step % self.pool_batches]

    def batch(self, step: int) -> Batch:
        chosen = self.indices(step)
        sources, pivots = self._sides(chosen)
        tokens, lengths = pad_batch(sources + pivots)
        return Batch(tokens, lengths, _shared_sides(sources, pivots),
                     [self.pairs[lang].lang for lang, _ in chosen], self._teacher_rows(chosen))

    def _sides(self, chosen: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
        """The foreign and the English token ids of the chosen (language, row) pairs."""
        return ([self.pairs[lang].source.sentence(row, self.max_length) for lang, row in chosen],
                [self.pairs[lang].pivot.sentence(row, self.max_length) for lang, row in chosen])

    def sample(self, batches: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Both sides of the first `batches` batches as one padded (tokens, lengths) sample."""
        chosen = np.concatenate([self.indices(step) for step in range(batches)])
        sources, pivots = self._sides(chosen)
        return pad_batch(sources + pivots)

    def _teacher_rows(self, chosen: np.ndarray) -> Optional[np.ndarray]:
        if any(p.teacher_rows is None for p in self.pairs):
            return None
        return np.array([self.pairs[lang].teacher_rows[row] for lang, row in chosen])


def _same(sequences: list[list[int]]) -> torch.Tensor:
    keys = {}
    ids = torch.tensor([keys.setdefault(tuple(s), len(keys)) for s in sequences])
    return ids.unsqueeze(0) == ids.unsqueeze(1)


def _shared_sides(sources: list[list[int]], pivots: list[list[int]]) -> torch.Tensor:
    """Pairs that share their foreign or their English sentence: not negatives of each other."""
    shared = _same(sources) | _same(pivots)
    return shared & ~torch.eye(len(sources), dtype=torch.bool)


def dev_sets(pairs: Sequence[LanguagePairs], max_length: int,
             limit: int | None = None) -> Mapping[str, tuple[list[list[int]], list[list[int]]]]:
    """Each language's dev (foreign, English) id sequences, the first `limit` pairs."""
    out = {}
    for p in pairs:
        count = len(p) if limit is None else min(limit, len(p))
        out[p.lang] = ([p.source.sentence(i, max_length) for i in range(count)],
                       [p.pivot.sentence(i, max_length) for i in range(count)])
    return out
