"""Training batches: token-id arrays read by memory map, languages drawn by temperature, pairs of
similar length batched together. Batch `step` depends only on (seed, step), so a resumed run sees
exactly the batches an uninterrupted one would."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Optional, Sequence

import numpy as np
import torch

from ..runtime.sequences import EOS, PAD
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

    def sentences(self, rows: np.ndarray) -> list[list[int]]:
        """Ids of sentences `rows`, whole."""
        return [self.tokens[start:end].tolist()
                for start, end in zip(self.offsets[rows], self.offsets[rows + 1])]

    def write(self, out: np.ndarray, at: np.ndarray, rows: np.ndarray, max_length: int
              ) -> np.ndarray:
        """Sentences `rows` into the PAD-filled rows `at` of `out` (max_length columns), one cut
        to more than max_length tokens keeping its first max_length - 1 and </s>; returns
        their lengths."""
        starts, full = self.offsets[rows], self.offsets[rows + 1] - self.offsets[rows]
        kept = np.minimum(full, max_length)
        row, column = np.nonzero(np.arange(max_length)[None, :] < kept[:, None])
        out[at[row], column] = self.tokens[starts[row] + column]
        out[at[full > max_length], max_length - 1] = EOS
        return kept


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
        self.first_row = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.lengths = np.concatenate([np.maximum(p.source.lengths, p.pivot.lengths)
                                       for p in self.pairs])  # indexed by _flat
        self.teacher_rows = (None if any(p.teacher_rows is None for p in self.pairs) else
                             np.concatenate([p.teacher_rows for p in self.pairs]))
        self.batch_size, self.seed, self.max_length = batch_size, seed, max_length
        self.pool_batches, self.topics = pool_batches, topics
        self._pool: tuple[int, np.ndarray] | None = None

    def _flat(self, languages: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Positions of (language, row) pairs in the arrays concatenated over languages."""
        return self.first_row[languages] + rows

    def _draw_pool(self, pool: int) -> np.ndarray:
        """(pool_batches, batch_size, 2) language and pair indices, each batch of similar length."""
        rng = np.random.default_rng([self.seed, pool])
        count = self.pool_batches * self.batch_size
        languages = rng.choice(len(self.pairs), size=count, p=self.probabilities)
        rows = (rng.random(count) * self.sizes[languages]).astype(np.int64)
        flat = self._flat(languages, rows)
        lengths = self.lengths[flat]
        order = np.lexsort((rng.random(count), lengths))
        if self.topics is not None:
            english = self.teacher_rows[flat]
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
        tokens, lengths = self._padded(chosen)
        size = len(chosen)
        teacher_rows = (None if self.teacher_rows is None else
                        self.teacher_rows[self._flat(chosen[:, 0], chosen[:, 1])])
        return Batch(torch.from_numpy(tokens), torch.from_numpy(lengths),
                     _shared_sides(tokens[:size], tokens[size:]),
                     [self.pairs[lang].lang for lang in chosen[:, 0]], teacher_rows)

    def _padded(self, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The foreign, then the English token ids of the chosen (language, row) pairs, cut to
        max_length and right-padded, built language by language; and their lengths."""
        size = len(chosen)
        tokens = np.full((2 * size, self.max_length), PAD, dtype=np.int64)
        lengths = np.empty(2 * size, dtype=np.int64)
        for lang in np.unique(chosen[:, 0]):
            at = np.flatnonzero(chosen[:, 0] == lang)
            rows, pairs = chosen[at, 1], self.pairs[lang]
            lengths[at] = pairs.source.write(tokens, at, rows, self.max_length)
            lengths[at + size] = pairs.pivot.write(tokens, at + size, rows, self.max_length)
        return np.ascontiguousarray(tokens[:, :lengths.max()]), lengths

    def sample(self, batches: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Both sides of the first `batches` batches as one padded (tokens, lengths) sample."""
        tokens, lengths = self._padded(np.concatenate([self.indices(step)
                                                       for step in range(batches)]))
        return torch.from_numpy(tokens), torch.from_numpy(lengths)


def prefetched(sampler: BatchSampler, first_step: int) -> Iterator[Batch]:
    """Batches first_step, first_step + 1, ... of `sampler`, each built in a background thread
    while the caller trains on the one before (numpy and torch release the GIL)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="batches") as worker:
        step, pending = first_step, worker.submit(sampler.batch, first_step)
        while True:
            batch = pending.result()
            step += 1
            pending = worker.submit(sampler.batch, step)
            yield batch


def _shared_sides(sources: np.ndarray, pivots: np.ndarray) -> torch.Tensor:
    """Pairs (rows of two padded id matrices) that share their foreign or their English
    sentence: not negatives of each other. Only the few repeated sentences are compared."""
    shared = torch.zeros((len(sources), len(sources)), dtype=torch.bool)
    for side in (sources, pivots):
        _, inverse, counts = np.unique(side, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        repeated = torch.from_numpy(np.flatnonzero(counts[inverse] > 1))
        ids = torch.from_numpy(inverse)[repeated]
        shared[repeated[:, None], repeated[None, :]] |= ids[:, None] == ids[None, :]
    return shared.fill_diagonal_(False)


def dev_sets(pairs: Sequence[LanguagePairs], limit: int | None = None
             ) -> Mapping[str, tuple[list[list[int]], list[list[int]]]]:
    """Each language's dev (foreign, English) id sequences, the first `limit` pairs, whole (as
    inference reads them: `--max-length` cuts training sentences only)."""
    out = {}
    for p in pairs:
        rows = np.arange(len(p) if limit is None else min(limit, len(p)))
        out[p.lang] = (p.source.sentences(rows), p.pivot.sentences(rows))
    return out
