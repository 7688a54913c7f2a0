"""Near-duplicate removal: a line is dropped when an earlier line is at least `threshold` similar
(cosine) among its k nearest neighbours, so the first of each group of near-duplicates is kept."""
from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..io.bad_lines import BadLines
from ..io.sources import FAIL, numbered_file_lines
from ..io.text import count_lines
from ..search.approximate import ApproximateSearch
from ..search.vectors import Neighbours, Vectors
from .graph import self_neighbours


@dataclass(frozen=True)
class DedupOptions:
    """Cosine at or above which two lines are near-duplicates, neighbours looked at per line, and
    the FAISS index to find them with (None: exact search)."""

    threshold: float = 0.95
    k: int = 10
    approximate: Optional[ApproximateSearch] = None


@dataclass
class Duplicates:
    """For each row: the earlier row it duplicates (-1: kept) and their cosine (NaN: kept)."""

    original: np.ndarray
    score: np.ndarray
    unsure: int = 0  # kept rows whose k neighbours all pass the threshold: raise k to be sure

    @property
    def keep(self) -> np.ndarray:
        return self.original < 0

    @property
    def dropped(self) -> int:
        return int((~self.keep).sum())


def find_duplicates(found: Neighbours, threshold: float, complete: bool = False) -> Duplicates:
    """Duplicates from each row's neighbours (best first): the most similar earlier neighbour at
    or above `threshold`. `complete`: the neighbours are every other row, so none is unsure."""
    rows, width = found.ids.shape
    if width == 0:
        return Duplicates(np.full(rows, -1, dtype=np.int64), np.full(rows, np.nan, np.float32))
    ids = np.arange(rows)
    passing = (found.ids >= 0) & (found.sims >= threshold)
    earlier = passing & (found.ids < ids[:, None])
    has = earlier.any(axis=1)
    first = earlier.argmax(axis=1)
    original = np.where(has, found.ids[ids, first], -1)
    score = np.where(has, found.sims[ids, first], np.nan)
    unsure = 0 if complete else int((~has & passing.all(axis=1)).sum())
    return Duplicates(original.astype(np.int64), score.astype(np.float32), unsure)


def deduplicate(vectors: Vectors, options: DedupOptions = DedupOptions(),
                progress: bool = False) -> Duplicates:
    """Which rows of a collection are near-duplicates of earlier ones."""
    found = self_neighbours(vectors, options.k, options.approximate, progress)
    return find_duplicates(found, options.threshold, complete=options.k >= len(vectors) - 1)


@dataclass(frozen=True)
class DedupOutputs:
    """Where `write_deduplicated` writes: the kept lines ('-': stdout), and optionally the
    0-based ids of the kept lines and a TSV of the dropped ones."""

    kept: str
    kept_ids: Optional[str] = None
    report: Optional[str] = None


def check_lines(text_path: str, rows: int) -> None:
    """Refuse a text file whose lines do not match the embedding rows one for one."""
    if (lines := count_lines(text_path)) != rows:
        raise LaserError(f"{text_path} has {lines} lines but there are {rows} embeddings")


def kept_line_numbers(text_path: str, bad: BadLines) -> np.ndarray:
    """The (0-based) numbers of the lines of `text_path` that `bad` keeps: the rows of a
    precomputed embeddings file (one a line) that are theirs."""
    return np.fromiter((number - 1 for number, _ in numbered_file_lines(text_path, bad)),
                       dtype=np.int64)


def write_deduplicated(text_path: str, duplicates: Duplicates, outputs: DedupOutputs,
                       bad: BadLines = FAIL) -> None:
    """Stream `text_path` once (its lines read as `bad` says, as they were to embed them, and
    counted in `bad`): kept lines to `outputs.kept`, their ids to `outputs.kept_ids`, and
    `dropped_id original_id score dropped_text original_text` rows to `outputs.report`. Ids
    are the lines' numbers in the file (0-based): a line `bad` skipped has none."""
    if bad.policy != "skip":  # skipped lines have no row
        check_lines(text_path, len(duplicates.original))
    originals = set(duplicates.original[duplicates.original >= 0].tolist())
    texts: dict[int, tuple[int, str]] = {}  # the id and text of each original, by its row
    with ExitStack() as stack:
        kept, ids, report = (stack.enter_context(atomic_text_output(path)) if path else None
                             for path in (outputs.kept, outputs.kept_ids, outputs.report))
        for row, ((number, text), original, score) in enumerate(zip(
                numbered_file_lines(text_path, bad), duplicates.original.tolist(),
                duplicates.score.tolist())):
            if row in originals:
                texts[row] = number - 1, text
            if original < 0:
                kept.write(text + "\n")
                if ids:
                    ids.write(f"{number - 1}\n")
            elif report:
                first, first_text = texts[original]
                report.write(f"{number - 1}\t{first}\t{score:.6f}\t{text}\t{first_text}\n")
