"""Writing mined pairs: the official TSV, 0-based line ids, or JSON lines, atomically."""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..io.text import line_texts
from .corpus import Corpus
from .retrieval import Pairs

OUTPUT_FORMATS = ("tsv", "ids", "jsonl")
# What --provenance adds of each side of a pair to its JSON record, each field prefixed by src_ or
# trg_ (and, in this order, to each TSV or ids line): a sentence file's file and line, or a
# document's file, name (URL or record id), paragraph and sentence.
LINE_FIELDS = ("file", "file_line")
DOCUMENT_FIELDS = ("file", "document", "paragraph", "sentence")
PROVENANCE_FIELDS = tuple(f"{side}_{name}" for side in ("src", "trg") for name in LINE_FIELDS)


@dataclass(frozen=True)
class SideOrigins:
    """Where a side's lines come from: the provenance fields, and `of` giving their values
    for some (0-based) lines of the side."""

    fields: tuple[str, ...]
    of: Callable[[np.ndarray], list[tuple]]


def line_origins(corpus: Corpus) -> SideOrigins:
    """The file and 1-based line of each line of a side."""
    def of(lines: np.ndarray) -> list[tuple]:
        files, numbers = corpus.locate(lines)
        return list(zip(files, numbers.tolist()))
    return SideOrigins(LINE_FIELDS, of)


def document_origins(corpus: Corpus, origins_file: Callable[[str], str]) -> SideOrigins:
    """The document provenance of each line of a side read from documents: its line of the
    provenance file (`origins_file` of its sentence file), as the cleaning stage wrote it."""
    def of(lines: np.ndarray) -> list[tuple]:
        files, numbers = corpus.locate(lines)
        found = {}
        for file in set(files):
            wanted = np.array([number - 1 for at, number in zip(files, numbers.tolist())
                               if at == file])
            found[file] = line_texts(origins_file(file), wanted)
        return [_document_origin(found[file][number - 1])
                for file, number in zip(files, numbers.tolist())]
    return SideOrigins(DOCUMENT_FIELDS, of)


def _document_origin(line: str) -> tuple:
    file, document, paragraph, sentence = line.split("\t")
    return file, document, int(paragraph), int(sentence)


def _rows(pairs: Pairs, fmt: str, mode: str, src_text: dict, trg_text: dict,
          origins: Optional[list[tuple]], fields: tuple[str, ...] = PROVENANCE_FIELDS,
          numbers: Optional[tuple[np.ndarray, np.ndarray]] = None) -> Iterator[str]:
    """Output lines: official TSV (score as the official tool prints it), ids, or JSON lines;
    with `origins`, each pair's provenance (`fields`: of the source, then of the target) after
    them. Lines are named by their `numbers` in the input (default: the pairs' lines)."""
    scores = pairs.score.tolist()
    origins = origins or itertools.repeat(None)
    src_numbers, trg_numbers = numbers or (pairs.src, pairs.trg)
    for s, t, score, origin, s_number, t_number in zip(
            pairs.src.tolist(), pairs.trg.tolist(), scores, origins, src_numbers.tolist(),
            trg_numbers.tolist()):
        if fmt == "jsonl":
            record = {"score": score if score == score else None, "src_line": s_number,
                      "trg_line": t_number, "src": src_text[s], "trg": trg_text[t]}
            if origin:
                record.update(zip(fields, origin))
            yield json.dumps(record, ensure_ascii=False) + "\n"
            continue
        if fmt == "ids":
            row = f"{score!r}\t{s_number}\t{t_number}"
        elif mode == "search":
            row = trg_text[t]
        else:
            shown = repr(score) if mode == "mine" else str(np.float32(score))
            row = f"{shown}\t{src_text[s]}\t{trg_text[t]}"
        yield row + ("".join(f"\t{value}" for value in origin) if origin else "") + "\n"


def pair_origins(pairs: Pairs, src: SideOrigins, trg: SideOrigins) -> list[tuple]:
    """The provenance of every pair: its source's, then its target's."""
    return [source + target for source, target in zip(src.of(pairs.src), trg.of(pairs.trg))]


def provenance_fields(src: SideOrigins, trg: SideOrigins) -> tuple[str, ...]:
    return tuple(f"{side}_{name}" for side, origins in (("src", src), ("trg", trg))
                 for name in origins.fields)


def write_pairs(output: str, pairs: Pairs, src: Corpus, trg: Corpus, fmt: str = "tsv",
                mode: str = "mine", provenance: bool = False) -> None:
    """Write `pairs` (line numbers) atomically; texts are read back from the corpora as needed;
    `provenance` adds each pair's files and lines."""
    texts = PairTexts(lambda lines: line_texts(src.path, lines),
                      lambda lines: line_texts(trg.path, lines))
    write_pair_chunks(output, [pairs], texts, src, trg, PairFormat(fmt, mode, provenance))


@dataclass(frozen=True)
class PairFormat:
    """How pairs are written: `fmt` (tsv, ids, jsonl) for `mode`, with `provenance` columns."""

    fmt: str = "tsv"
    mode: str = "mine"
    provenance: bool = False

    def __post_init__(self) -> None:
        if self.fmt not in OUTPUT_FORMATS:
            raise LaserError(f"unknown output format {self.fmt!r}; "
                             f"choose one of {', '.join(OUTPUT_FORMATS)}")

    @property
    def needs_src(self) -> bool:
        return self.fmt == "jsonl" or (self.fmt == "tsv" and self.mode != "search")

    @property
    def needs_trg(self) -> bool:
        return self.fmt != "ids"


# The texts of some (0-based) lines of a side: {line: text}.
LineTexts = Callable[[np.ndarray], dict]
# Which pairs of a chunk to write, given the texts of their lines (None: all).
PairFilter = Callable[[Pairs, list, list], np.ndarray]


@dataclass(frozen=True)
class PairTexts:
    """The texts of each side's lines, and their provenance (None: their files and lines)."""

    src: LineTexts
    trg: LineTexts
    origins: Optional[tuple[SideOrigins, SideOrigins]] = None


@dataclass
class WrittenPairs:
    """What `write_pair_chunks` wrote: how many pairs, how many the filter dropped, and (when
    `keep_scores`: 4 bytes a pair, for a summary) the scores written."""

    keep_scores: bool = False
    count: int = 0
    dropped: int = 0
    scores: list = field(default_factory=list)

    def add(self, pairs: Pairs) -> None:
        self.count += len(pairs)
        if self.keep_scores:
            self.scores.append(np.asarray(pairs.score))

    def all_scores(self) -> np.ndarray:
        return np.concatenate(self.scores) if self.scores else np.zeros(0, np.float32)


def write_pair_chunks(output: str, chunks: Iterable[Pairs], texts: PairTexts, src: Corpus,
                      trg: Corpus, how: PairFormat, keep: Optional[PairFilter] = None,
                      written: Optional[WrittenPairs] = None) -> WrittenPairs:
    """Write chunks of pairs (line numbers) atomically, streamed: each chunk's texts are looked
    up as it is written; `keep` drops pairs by their texts (the language filter)."""
    written = written or WrittenPairs()
    sides = texts.origins or (line_origins(src), line_origins(trg))
    fields = provenance_fields(*sides)
    with atomic_text_output(output) as out:
        for pairs in chunks:
            needs_src, needs_trg = how.needs_src or keep, how.needs_trg or keep
            src_text = texts.src(pairs.src) if needs_src and len(pairs) else {}
            trg_text = texts.trg(pairs.trg) if needs_trg and len(pairs) else {}
            if keep and len(pairs):
                mask = keep(pairs, [src_text[line] for line in pairs.src.tolist()],
                            [trg_text[line] for line in pairs.trg.tolist()])
                written.dropped += int(len(mask) - mask.sum())
                pairs = Pairs(pairs.src[mask], pairs.trg[mask], pairs.score[mask])
            origins = pair_origins(pairs, *sides) if how.provenance else None
            numbers = src.numbers(pairs.src), trg.numbers(pairs.trg)
            out.writelines(_rows(pairs, how.fmt, how.mode, src_text, trg_text, origins, fields,
                                 numbers))
            written.add(pairs)
    return written
