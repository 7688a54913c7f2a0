"""BPE with fastBPE codes and vocabulary: the `fast applybpe` algorithm, in fastBPE or in Python.

Both backends give identical output. The Python one exists so that a failed fastBPE build never
stops anyone: fastBPE is used when it imports, unless `backend="python"` is asked for.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from ..errors import LaserError
from ..io.stderr import stderr_redirected

END_OF_WORD = "</w>"
CONTINUATION = "@@"
WORD_CACHE_SIZE = 1 << 18


def _read_fields(path: str | os.PathLike, layout: str) -> Iterator[list[str]]:
    """Space-separated fields of each line; `layout` names them, e.g. 'left right count'."""
    width = len(layout.split())
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split(" ")
            if len(fields) != width:
                raise LaserError(f"{path}:{number}: expected '{layout}' in a BPE file")
            yield fields


def read_codes(path: str | os.PathLike) -> list[tuple[str, str]]:
    """Merge operations in priority order, from lines `left right count`."""
    return [(left, right) for left, right, _ in _read_fields(path, "left right count")]


def read_vocab(path: str | os.PathLike) -> list[str]:
    """Subword tokens in file order, from lines `token count`."""
    return [token for token, _ in _read_fields(path, "token count")]


class PythonBPE:
    """fastBPE's `applybpe`, word by word: greedy best-ranked merges, then the vocabulary limit."""

    def __init__(self, codes: str | os.PathLike, vocab: Optional[str | os.PathLike] = None):
        merges = read_codes(codes)
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.unmerge = {left + right: (left, right) for left, right in merges}
        self.vocab = frozenset(read_vocab(vocab)) if vocab else frozenset()
        self.apply_word = lru_cache(maxsize=WORD_CACHE_SIZE)(self._apply_word)

    def _apply_word(self, word: str) -> str:
        subwords = list(word[:-1]) + [word[-1] + END_OF_WORD]
        subwords = self._merge(subwords)
        if self.vocab:
            subwords = self._limit_to_vocab(subwords)
        return f"{CONTINUATION} ".join(subwords)[: -len(END_OF_WORD)]

    def _merge(self, subwords: list[str]) -> list[str]:
        ranks = self.ranks
        while len(subwords) > 1:
            best = None
            for pair in zip(subwords, subwords[1:]):
                rank = ranks.get(pair)
                if rank is not None and (best is None or rank < ranks[best]):
                    best = pair
            if best is None:
                break
            merged, i = [], 0
            while i < len(subwords):
                if i + 1 < len(subwords) and (subwords[i], subwords[i + 1]) == best:
                    merged.append(subwords[i] + subwords[i + 1])
                    i += 2
                else:
                    merged.append(subwords[i])
                    i += 1
            subwords = merged
        return subwords

    def _in_vocab(self, subword: str, final: bool) -> bool:
        return (subword[: -len(END_OF_WORD)] if final else subword + CONTINUATION) in self.vocab

    def _limit_to_vocab(self, subwords: list[str]) -> list[str]:
        kept: list[str] = []
        last = len(subwords) - 1
        for i, subword in enumerate(subwords):
            if self._in_vocab(subword, i == last):
                kept.append(subword)
            else:
                self._decompose(subword, kept, i == last)
        return kept

    def _decompose(self, subword: str, out: list[str], final: bool) -> None:
        """Undo merges of an out-of-vocabulary subword until its parts are known (or characters)."""
        parts = self.unmerge.get(subword)
        if parts is None:
            out.append(subword)
            return
        left, right = parts
        if left + CONTINUATION in self.vocab:
            out.append(left)
        else:
            self._decompose(left, out, False)
        if self._in_vocab(right, final):
            out.append(right)
        else:
            self._decompose(right, out, final)


class FastBPE:
    """The fastBPE extension, applied to single words so spacing is kept as `applybpe` keeps it."""

    def __init__(self, codes: str | os.PathLike, vocab: Optional[str | os.PathLike] = None):
        import fastBPE
        read_codes(codes)  # validate here: fastBPE aborts the process on a malformed file
        if vocab:
            read_vocab(vocab)
        with open(os.devnull, "w") as devnull, stderr_redirected(devnull):
            # fastBPE reports its loading on the C++ stderr
            self._bpe = fastBPE.fastBPE(str(codes), str(vocab) if vocab else "")
        self.apply_word = lru_cache(maxsize=WORD_CACHE_SIZE)(self._apply_word)

    def _apply_word(self, word: str) -> str:
        return self._bpe.apply([word])[0]


def fastbpe_available() -> bool:
    try:
        import fastBPE  # noqa: F401
    except ImportError:
        return False
    return True


BACKENDS: dict[str, Callable] = {"fastbpe": FastBPE, "python": PythonBPE}


class BPE:
    """Applies BPE to tokenised lines; `backend` is 'auto', 'fastbpe' or 'python'."""

    def __init__(self, codes: str | os.PathLike, vocab: Optional[str | os.PathLike] = None,
                 backend: str = "auto"):
        for path in (codes, vocab):
            if path and not Path(path).is_file():
                raise LaserError(f"{path}: BPE file not found")
        if backend == "auto":
            backend = "fastbpe" if fastbpe_available() else "python"
        if backend not in BACKENDS:
            raise LaserError(f"unknown BPE backend {backend!r}; choose auto, fastbpe or python")
        self.backend = backend
        self._impl = BACKENDS[backend](codes, vocab)

    def apply_word(self, word: str) -> str:
        """BPE one non-empty word: `hello` -> `hel@@ lo`."""
        return self._impl.apply_word(word)

    def apply_line(self, line: str) -> str:
        """BPE one tokenised line; spaces are kept exactly, as `fast applybpe` keeps them."""
        apply_word = self._impl.apply_word
        return " ".join(apply_word(word) if word else "" for word in line.split(" "))

    def apply_lines(self, lines: Iterable[str]) -> list[str]:
        return [self.apply_line(line) for line in lines]
