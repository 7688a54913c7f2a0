"""A side of a bitext as the miner sees it: the lines of its files, and with --unify its distinct
sentences."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.sources import STDIN, check_input, located_lines
from ..search.vectors import Vectors
from .unify import Unified, UnifyOptions, unify_lines


@dataclass
class Corpus:
    """A side read once: the distinct sentence of each line (all, unless unified); `path` is
    the side as given (a file, directory, glob or @LIST), `files` its files that have lines, in
    order, and `file_starts` the number of the first line of each in the side's input.

    Its lines are those kept: with `skipped` lines left out (--bad-lines skip), `line_number`
    gives the number in the input of each line kept (0-based over the side, as the input's
    embedding rows are numbered); outputs name lines by those numbers."""

    path: str
    line_sentence: np.ndarray
    first_line: np.ndarray
    embedding_row: np.ndarray
    files: tuple[str, ...] = ()
    file_starts: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    line_number: Optional[np.ndarray] = None
    skipped: int = 0

    @property
    def lines(self) -> int:
        return len(self.line_sentence)

    @property
    def sentences(self) -> int:
        return len(self.first_line)

    @property
    def input_lines(self) -> int:
        """The lines of the input, those skipped included."""
        return self.lines + self.skipped

    def numbers(self, lines: np.ndarray) -> np.ndarray:
        """The number in the input of each (0-based) line of the side."""
        return lines if self.line_number is None else np.asarray(self.line_number[lines])

    def kept(self, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of lines of the input (by number): which were kept, and their line of the side."""
        if self.line_number is None or not self.lines:
            return np.ones(len(numbers), dtype=bool), numbers
        at = np.minimum(np.searchsorted(self.line_number, numbers), self.lines - 1)
        return np.asarray(self.line_number[at]) == numbers, at

    def locate(self, lines: np.ndarray) -> tuple[list[str], np.ndarray]:
        """The file of each (0-based) line of the side, and its 1-based line number there."""
        files = self.files or (self.path,)
        numbers = self.numbers(lines)
        index = np.searchsorted(self.file_starts, numbers, side="right") - 1
        return [files[i] for i in index.tolist()], numbers - self.file_starts[index] + 1


def scan_corpus(path: str, unify: bool = False, legacy_line_map: bool = False,
                unify_options: UnifyOptions = UnifyOptions(),
                workdir: Optional[str] = None) -> Corpus:
    """Count the lines of a side (streamed); with `unify`, merge its duplicate lines (identical,
    or alike once normalised: `unify_options`) into one sentence, in bounded memory (spilling to
    `workdir`). (`laser mine` does the same by tasks: `laser.distributed.mine_tasks`.)

    A merged sentence keeps the embedding of its last occurrence, as the official tool does;
    outputs refer to its first line. `legacy_line_map` (without `unify`) reproduces the official
    tool's defect of looking rows up by the rank of a line's first occurrence.
    """
    check_side_input(path)
    files: list[str] = []
    starts: list[int] = []
    lines = _noting_files(path, files, starts)
    unified = None
    if unify or legacy_line_map:
        unified = unify_lines(lines, unify_options if unify else UnifyOptions(), workdir)
        total = len(unified.line_sentence)
    else:
        total = sum(1 for _ in lines)
    check_not_empty(path, total)
    return Corpus(path, *corpus_arrays(unified, unify, total), files=tuple(files),
                  file_starts=np.array(starts, dtype=np.int64))


def check_not_empty(path: str, lines: int) -> None:
    if lines == 0:
        raise LaserError(f"{path}: empty corpus")


def corpus_arrays(unified: Optional[Unified], unify: bool,
                  lines: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sentence of each line, the first line and the embedding row of each sentence: of
    the lines unified (the sentences with `unify`, else only the legacy line map), or of the
    lines themselves."""
    every = np.arange(lines)
    if unified is None:
        return every, every, every
    if not unify:
        return unified.line_sentence, every, every
    return unified.line_sentence, unified.first_line, unified.last_line


def check_side_input(path: str) -> None:
    """Refuse stdin (a side is read more than once) and inputs that are not there."""
    if path == STDIN:
        raise LaserError("sentence files are read twice: pass a file, not '-' (stdin)")
    check_input(path)


def _noting_files(spec: str, files: list[str], starts: list[int]) -> Iterator[str]:
    """The lines of `spec`; each file with lines is appended to `files` as it starts, and the
    number of its first line (over the side) to `starts`."""
    for index, (path, number, text) in enumerate(located_lines(spec)):
        if number == 1:
            files.append(path)
            starts.append(index)
        yield text


def corpus_vectors(corpus: Corpus, embeddings: np.ndarray, name: str) -> Vectors:
    """The embeddings of each distinct sentence, after checking there is one row per line of
    the input (a skipped line's row is left out with it)."""
    if embeddings.shape[0] != corpus.input_lines:
        raise LaserError(f"{corpus.path} has {corpus.input_lines} lines but {name} holds "
                         f"{embeddings.shape[0]} embeddings")
    rows = (None if corpus.sentences == corpus.lines and not corpus.skipped
            else corpus.numbers(corpus.embedding_row))
    return Vectors(embeddings, name=name, rows=rows)
