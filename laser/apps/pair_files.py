"""Pair filter jobs on files: pair TSVs (`src<TAB>trg`, or `score<TAB>src<TAB>trg` as `laser mine`
writes them) whose columns are embedded now or come precomputed (one row per line), a filter
trained from one, and a file of candidates scored in chunks."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import numpy as np

from ..errors import LaserError, located
from ..io.atomic import atomic_text_output, check_output_path
from ..io.embeddings import open_embeddings
from ..io.sidecar import read_sidecar
from ..io.text import batched, check_input, count_lines, read_lines
from ..lid.check import LanguagePair
from ..models.spaces import Origin, check_same_space
from ..search.inputs import EmbeddingSource, EncoderLoader
from .pair_filter import EmbeddingModel, FilterOptions, PairFilter, progress_bar

Encoders = tuple[EncoderLoader, EncoderLoader]  # the models of the source and target columns
LAYOUTS = {2: "src<TAB>trg", 3: "score<TAB>src<TAB>trg"}
CHUNK_PAIRS = 10000


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_pair_tsv(path: str) -> Iterator[tuple[str, str]]:
    """(src, trg) of each line of a pair TSV: 2 columns, or 3 with a score first (ignored); every
    line as the first one. Wrong shapes and empty files are errors naming the file (and line)."""
    columns = None
    for number, line in enumerate(read_lines(path), 1):
        fields = line.split("\t")
        if columns is None:
            columns = len(fields)
            if columns not in LAYOUTS:
                raise located(path, number, f"{columns} column(s); expected src<TAB>trg or "
                                            "score<TAB>src<TAB>trg")
        elif len(fields) != columns:
            raise located(path, number, f"{len(fields)} column(s) but line 1 has {columns} "
                                        f"({LAYOUTS[columns]})")
        if columns == 3 and not _is_number(fields[0]):
            raise located(path, number, f"first column {fields[0][:20]!r} is not a score "
                                        "(expected score<TAB>src<TAB>trg)")
        yield fields[-2], fields[-1]
    if columns is None:
        raise LaserError(f"{path}: empty file, no pairs")


class Column:
    """One side of a pair file as embeddings: rows of a precomputed matrix (one per line), or
    the column's text embedded now in its language."""

    def __init__(self, source: EmbeddingSource, encoder: EncoderLoader, pairs: Optional[int]):
        self.source, self.encoder = source, encoder
        self.matrix = None
        if source.embeddings:
            self.matrix = open_embeddings(source.embeddings, source.dim, source.fp16)
            if pairs is not None and len(self.matrix) != pairs:
                self._row_mismatch(pairs)
        elif not source.lang:
            raise LaserError(f"{source.text}: pass {source.option}embeddings, or "
                             f"{source.option}lang to embed that column with the model")

    @property
    def dim(self) -> int:
        return self.matrix.shape[1] if self.matrix is not None else self.encoder().dim

    @property
    def name(self) -> str:
        return self.source.embeddings or f"{self.source.text} ({self.source.option}lang)"

    def model(self) -> EmbeddingModel:
        """The model behind this column's embeddings (sha256 None when not recorded)."""
        if self.matrix is None:
            return EmbeddingModel.of(self.encoder())
        record = read_sidecar(self.source.embeddings)
        return EmbeddingModel(record.get("model_sha256"), self.dim, record.get("model_files", {}),
                              record.get("model_name"), record.get("model_space"))

    def origin(self) -> Origin:
        """The model and space of this column's embeddings, for `check_same_space`."""
        return self.model().origin(self.name)

    def rows(self, start: int, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of lines start.. (whose texts are given)."""
        if self.matrix is None:
            return self.encoder().encode(list(texts), self.source.lang)
        if start + len(texts) > len(self.matrix):
            self._row_mismatch(None)
        return np.asarray(self.matrix[start:start + len(texts)], dtype=np.float32)

    def check_used(self, pairs: int) -> None:
        if self.matrix is not None and len(self.matrix) != pairs:
            self._row_mismatch(pairs)

    def _row_mismatch(self, pairs: Optional[int]) -> None:
        lines = "more" if pairs is None else str(pairs)
        raise LaserError(f"{self.source.embeddings} has {len(self.matrix)} rows but "
                         f"{self.source.text} has {lines} pairs: one row per line is needed")


def _columns(path: str, src: EmbeddingSource, trg: EmbeddingSource,
             encoders: Encoders) -> tuple[Column, Column]:
    check_input(path)
    pairs = count_lines(path) if src.embeddings or trg.embeddings else None
    return Column(src, encoders[0], pairs), Column(trg, encoders[1], pairs)


def training_model(src: Column, trg: Column) -> EmbeddingModel:
    """The model behind both columns; embeddings of two different spaces are refused."""
    if src.dim != trg.dim:
        raise LaserError(f"{src.name} has {src.dim}-d embeddings but {trg.name} {trg.dim}-d ones")
    check_same_space(src.origin(), trg.origin())
    first = src.model()
    return first if first.sha256 else trg.model()


def _embed(column: Column, texts: list[str], progress: bool) -> np.ndarray:
    """The rows of a whole column, embedded in chunks with a progress bar."""
    if column.matrix is not None:
        return column.rows(0, texts)
    parts = []
    with progress_bar(len(texts), progress, "sent", f"embedding {column.source.lang}") as bar:
        for start in range(0, len(texts), CHUNK_PAIRS):
            parts.append(column.rows(start, texts[start:start + CHUNK_PAIRS]))
            bar.update(len(parts[-1]))
    return np.concatenate(parts)


def train_from_file(path: str, src: EmbeddingSource, trg: EmbeddingSource,
                    encoders: Encoders, options: FilterOptions = FilterOptions(),
                    progress: bool = False) -> PairFilter:
    """A filter learned from the parallel pairs of a TSV (held in memory: a training set)."""
    src_column, trg_column = _columns(path, src, trg, encoders)
    pairs = list(read_pair_tsv(path))
    src_texts, trg_texts = (list(side) for side in zip(*pairs))
    model = training_model(src_column, trg_column)
    x, y = _embed(src_column, src_texts, progress), _embed(trg_column, trg_texts, progress)
    info = {"pairs_file": os.path.abspath(path), "src_lang": src.lang, "trg_lang": trg.lang,
            "src_embeddings": src.embeddings, "trg_embeddings": trg.embeddings}
    return PairFilter.train(x, y, model, options, progress, info)


@dataclass(frozen=True)
class ScoreReport:
    """What `score_file` did: pairs read, rows written, pairs dropped by the language filter."""

    pairs: int
    kept: int
    wrong_language: int = 0


def score_file(pair_filter: PairFilter, path: str, output: str, src: EmbeddingSource,
               trg: EmbeddingSource, encoders: Encoders, threshold: Optional[float] = None,
               progress: bool = False, languages: Optional[LanguagePair] = None) -> ScoreReport:
    """Write `prob<TAB>src<TAB>trg` for every pair of a TSV, in input order (with a threshold:
    only the pairs whose probability is above it; with `languages`: only the pairs whose sides
    are identified as their languages), atomically."""
    check_output_path(output)
    columns = _columns(path, src, trg, encoders)
    for column in columns:
        pair_filter.check_model(column.origin(), column.dim)
    pairs = kept = wrong_language = 0
    with atomic_text_output(output) as out, \
            progress_bar(count_lines(path) if progress else 0, progress, "pair", "scoring") as bar:
        for chunk in batched(read_pair_tsv(path), CHUNK_PAIRS):
            src_texts, trg_texts = zip(*chunk)
            probabilities = pair_filter.probabilities(columns[0].rows(pairs, src_texts),
                                                      columns[1].rows(pairs, trg_texts))
            matches = languages.matches(src_texts, trg_texts) if languages else None
            for index, (p, s, t) in enumerate(zip(probabilities.tolist(), src_texts, trg_texts)):
                if matches is not None and not matches[index]:
                    wrong_language += 1
                elif threshold is None or p > threshold:
                    out.write(f"{p:.6f}\t{s}\t{t}\n")
                    kept += 1
            pairs += len(chunk)
            bar.update(len(chunk))
        for column in columns:
            column.check_used(pairs)
    return ScoreReport(pairs, kept, wrong_language)
