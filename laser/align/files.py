"""`laser align` on files: two documents of one sentence a line aligned, the beads written in
one of `formats.FORMATS` (the file appears only when complete), and what was found."""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from ..io.atomic import atomic_text_output, check_output_path
from ..io.sources import check_input, file_lines
from .aligner import align_sentences
from .beads import AlignOptions, Bead
from .formats import Document, write_beads
from .overlaps import Embed


@dataclass(frozen=True)
class OutputOptions:
    """How beads are written: `format` (tsv, vecalign, jsonl) and the least score of a bead
    kept in the text formats (`min_score`; None keeps every bead)."""

    format: str = "tsv"
    min_score: Optional[float] = None


@dataclass
class AlignReport:
    """What aligning one document pair found."""

    src_sentences: int
    trg_sentences: int
    kinds: Counter = field(default_factory=Counter)  # beads by kind ('1-1', '2-1', '0-1'...)
    dropped: int = 0  # beads under --min-score, left out of the output
    seconds: float = 0.0

    @property
    def beads(self) -> int:
        return sum(self.kinds.values())

    def summary(self) -> str:
        kinds = ", ".join(f"{kind} {count}" for kind, count in
                          sorted(self.kinds.items(), key=lambda item: -item[1]))
        dropped = f"; {self.dropped} under --min-score left out" if self.dropped else ""
        return (f"aligned {self.src_sentences} and {self.trg_sentences} sentences in "
                f"{self.beads} beads ({kinds or 'none'}){dropped} in {self.seconds:.1f} s")

    @classmethod
    def of(cls, beads: list[Bead], src: int, trg: int, dropped: int, seconds: float) -> AlignReport:
        return cls(src, trg, Counter(bead.kind for bead in beads), dropped, seconds)


def read_document(path: str) -> list[str]:
    """The sentences of a document file, one a line ('-': stdin); invalid UTF-8 and NUL bytes
    are errors naming the file and line."""
    check_input(path)
    return list(file_lines(path))


def align_files(src_path: str, trg_path: str, output_path: str, embedders: tuple[Embed, Embed],
                options: AlignOptions = AlignOptions(),
                output: OutputOptions = OutputOptions()) -> AlignReport:
    """Align the documents `src_path` and `trg_path` (one sentence a line) with their sides'
    `embedders`, writing the beads to `output_path` ('-': stdout)."""
    started = time.perf_counter()
    if output_path != "-":
        check_output_path(output_path)
    src, trg = read_document(src_path), read_document(trg_path)
    beads = align_sentences(src, trg, *embedders, options)
    with atomic_text_output(output_path) as out:
        dropped = write_beads(out, beads, Document(src), Document(trg), output.format,
                              output.min_score)
    return AlignReport.of(beads, len(src), len(trg), dropped, time.perf_counter() - started)
