"""Learning BPE: fastBPE-format codes (`left right count`) and vocabulary (`token count`) from word counts.

The merge loop keeps, for every symbol pair, its weighted count and the words that hold it, so a
merge only revisits the words it changes; the most frequent pair comes off a lazily updated heap.
Ties go to the lexicographically smallest pair, so the codes are deterministic.
"""
from __future__ import annotations

import heapq
import os
from collections import Counter, defaultdict
from typing import Callable, Iterable, Mapping

from .fastbpe import END_OF_WORD
from ..io.atomic import atomic_text_output

Pair = tuple[str, str]
MIN_PAIR_COUNT = 2


def _split_word(word: str) -> list[str]:
    return list(word[:-1]) + [word[-1] + END_OF_WORD]


def _merge_pair(symbols: list[str], pair: Pair, merged: str) -> list[str]:
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
            out.append(merged)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


class _PairStatistics:
    """Weighted pair counts over a word list, with an index from each pair to its words."""

    def __init__(self, words: list[list[str]], counts: list[int]):
        self.words, self.counts = words, counts
        self.count: Counter[Pair] = Counter()
        self.holders: defaultdict[Pair, set[int]] = defaultdict(set)
        for index, symbols in enumerate(words):
            self._add(index, symbols)
        self.heap = [(-count, pair) for pair, count in self.count.items()]
        heapq.heapify(self.heap)

    def _add(self, index: int, symbols: list[str]) -> None:
        weight = self.counts[index]
        for pair in zip(symbols, symbols[1:]):
            self.count[pair] += weight
            self.holders[pair].add(index)

    def _remove(self, index: int, symbols: list[str]) -> None:
        weight = self.counts[index]
        for pair in zip(symbols, symbols[1:]):
            self.count[pair] -= weight

    def most_frequent(self) -> tuple[Pair, int] | None:
        while self.heap:
            negative, pair = heapq.heappop(self.heap)
            current = self.count.get(pair, 0)
            if current == -negative:
                return pair, current
            if current > 0:
                heapq.heappush(self.heap, (-current, pair))
        return None

    def merge(self, pair: Pair) -> None:
        merged = pair[0] + pair[1]
        for index in self.holders.pop(pair, ()):
            old = self.words[index]
            new = _merge_pair(old, pair, merged)
            self._remove(index, old)
            self._add(index, new)
            self.words[index] = new
            for new_pair in zip(new, new[1:]):
                if merged in new_pair:
                    heapq.heappush(self.heap, (-self.count[new_pair], new_pair))
        self.count.pop(pair, None)


def learn_codes(word_counts: Mapping[str, int], merges: int,
                on_merge: Callable[[], None] | None = None) -> list[tuple[str, str, int]]:
    """Up to `merges` merge operations, most frequent pair first (as `fast learnbpe`)."""
    words = [w for w in word_counts if w]
    stats = _PairStatistics([_split_word(w) for w in words], [word_counts[w] for w in words])
    codes: list[tuple[str, str, int]] = []
    while len(codes) < merges:
        best = stats.most_frequent()
        if best is None or best[1] < MIN_PAIR_COUNT:
            break
        pair, count = best
        codes.append((pair[0], pair[1], count))
        stats.merge(pair)
        if on_merge:
            on_merge()
    return codes


def subword_counts(word_counts: Mapping[str, int], apply_word: Callable[[str], str]) -> Counter:
    """Counts of the subword tokens (`hel@@`, `lo`) BPE makes of the words (as `fast getvocab`)."""
    tokens: Counter[str] = Counter()
    for word, count in word_counts.items():
        if word:
            for token in apply_word(word).split(" "):
                tokens[token] += count
    return tokens


def add_words(counts: Counter, line: str) -> None:
    """Count the words of one tokenised line (split on single spaces, as BPE splits it)."""
    counts.update(word for word in line.split(" ") if word)


def count_words(lines: Iterable[str]) -> Counter:
    counts: Counter[str] = Counter()
    for line in lines:
        add_words(counts, line)
    return counts


def write_codes(path: str | os.PathLike, codes: Iterable[tuple[str, str, int]]) -> None:
    with atomic_text_output(path) as out:
        for left, right, count in codes:
            out.write(f"{left} {right} {count}\n")


def write_vocab(path: str | os.PathLike, counts: Counter, min_count: int = 1) -> list[str]:
    """Tokens by decreasing count (ties by token), those seen at least `min_count` times."""
    tokens = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
    with atomic_text_output(path) as out:
        for token in tokens:
            out.write(f"{token} {counts[token]}\n")
    return tokens
