"""Beads as `laser align` writes them: tsv (source text, target text, score), Vecalign's ladder
(`[i, j]:[k]:COST`, 0-based, `[]` on the side of an insertion or deletion: what Vecalign's
scorer and Bitextor read) and jsonl (indices, texts, score); and the ladder read back."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, TextIO

from ..errors import LaserError
from .beads import Bead

FORMATS = ("tsv", "vecalign", "jsonl")
TEXT_FORMATS = ("tsv", "jsonl")  # those that --min-score thins
_LADDER_LINE = re.compile(r"^\[([0-9, ]*)\]:\[([0-9, ]*)\](?::(\S+))?$")


@dataclass(frozen=True)
class Document:
    """A document's sentences, to write the text of beads."""

    sentences: Sequence[str]

    def text(self, indices: tuple[int, ...]) -> str:
        return " ".join(self.sentences[i] for i in indices)


def tsv_line(bead: Bead, src: Document, trg: Document) -> str:
    return f"{_one_line(src.text(bead.src))}\t{_one_line(trg.text(bead.trg))}\t{bead.score:.4f}\n"


def ladder_line(bead: Bead, src: Document, trg: Document) -> str:
    return f"{_indices(bead.src)}:{_indices(bead.trg)}:{bead.cost:.6f}\n"


def jsonl_line(bead: Bead, src: Document, trg: Document) -> str:
    record = {"src": list(bead.src), "trg": list(bead.trg), "src_text": src.text(bead.src),
              "trg_text": trg.text(bead.trg), "score": round(bead.score, 6)}
    return json.dumps(record, ensure_ascii=False) + "\n"


WRITERS: dict[str, Callable[[Bead, Document, Document], str]] = {
    "tsv": tsv_line, "vecalign": ladder_line, "jsonl": jsonl_line}


def write_beads(out: TextIO, beads: Iterable[Bead], src: Document, trg: Document,
                format: str = "tsv", min_score: float | None = None) -> int:
    """Write `beads` in `format`, leaving out of the text formats those scoring under
    `min_score`; the number left out."""
    if format not in WRITERS:
        raise LaserError(f"unknown alignment format {format!r}; one of {', '.join(FORMATS)}")
    line = WRITERS[format]
    dropped = 0
    for bead in beads:
        if thinned(bead, format, min_score):
            dropped += 1
            continue
        out.write(line(bead, src, trg))
    return dropped


def thinned(bead: Bead, format: str, min_score: float | None) -> bool:
    """Whether `min_score` leaves the bead out: of the text formats only (the ladder keeps
    every bead, so that it stays a whole alignment)."""
    return min_score is not None and format in TEXT_FORMATS and bead.score < min_score


def _indices(indices: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, indices)) + "]"


def _one_line(text: str) -> str:
    return text.replace("\t", " ")


def read_ladder(lines: Iterable[str], name: str = "the ladder") -> list[Bead]:
    """The beads of a Vecalign ladder (a gold file's lines have no cost), `name` naming it in
    errors; score 0, cost as written."""
    beads = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        match = _LADDER_LINE.match(line)
        if not match:
            raise LaserError(f"{name}:{number}: not a ladder line [i, j]:[k]:COST: {line[:60]!r}")
        src, trg = (tuple(int(i) for i in part.split(",") if i.strip())
                    for part in match.group(1, 2))
        try:
            cost = float(match.group(3) or 0.0)
        except ValueError:
            raise LaserError(f"{name}:{number}: the cost {match.group(3)!r} is not a number"
                             ) from None
        beads.append(Bead(src, trg, 0.0, cost))
    return beads
