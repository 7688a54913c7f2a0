"""The outputs of `laser align --pair-documents`: the document pairs found
(`SRC_FILE<TAB>TRG_FILE<TAB>SCORE`, names relative to their folders) and the beads of every pair
in one file, each bead with its two documents and its sentence indices (0-based), in the format
`--format` chooses. Both written atomically."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence, TextIO

from ..io.atomic import atomic_text_output
from .collection import Document
from .pairing import DocumentMatch


@dataclass
class WrittenBeads:
    """Beads written, and beads dropped under the minimum score."""

    beads: int = 0
    dropped: int = 0


def write_document_pairs(path: str, matches: Sequence[DocumentMatch],
                         src: Sequence[Document], trg: Sequence[Document]) -> None:
    with atomic_text_output(path) as f:
        for match in matches:
            f.write(f"{src[match.src].name}\t{trg[match.trg].name}\t{match.score:.4f}\n")


def _indices(side: tuple[int, ...]) -> str:
    return ",".join(map(str, side))


def _text(sentences: list[str], side: tuple[int, ...]) -> str:
    return " ".join(sentences[i] for i in side)


def _tsv(f: TextIO, names: tuple[str, str], bead, src: list[str], trg: list[str]) -> None:
    """SRC_FILE, SRC_INDICES, TRG_FILE, TRG_INDICES, source text, target text, score."""
    f.write(f"{names[0]}\t{_indices(bead.src)}\t{names[1]}\t{_indices(bead.trg)}\t"
            f"{_text(src, bead.src)}\t{_text(trg, bead.trg)}\t{bead.score:.4f}\n")


def _jsonl(f: TextIO, names: tuple[str, str], bead, src: list[str], trg: list[str]) -> None:
    record = {"src_document": names[0], "trg_document": names[1], "src": list(bead.src),
              "trg": list(bead.trg), "src_text": _text(src, bead.src),
              "trg_text": _text(trg, bead.trg), "score": round(bead.score, 6)}
    f.write(json.dumps(record, ensure_ascii=False) + "\n")


def _vecalign(f: TextIO, names: tuple[str, str], bead, src: list[str], trg: list[str]) -> None:
    """SRC_FILE, TRG_FILE and the bead in Vecalign's ladder, `[i, j]:[k]:COST` (1 - score)."""
    f.write(f"{names[0]}\t{names[1]}\t{list(bead.src)}:{list(bead.trg)}:"
            f"{1.0 - bead.score:.6f}\n")


WRITERS = {"tsv": _tsv, "jsonl": _jsonl, "vecalign": _vecalign}


def write_document_beads(path: str, matches: Sequence[DocumentMatch], src: Sequence[Document],
                         trg: Sequence[Document], fmt: str,
                         min_score: float | None = None) -> WrittenBeads:
    """Every pair's beads, pair after pair in source order; with `min_score`, the text formats
    (tsv, jsonl) leave out weaker beads and count them (the ladder keeps every bead)."""
    write, written = WRITERS[fmt], WrittenBeads()
    with atomic_text_output(path) as f:
        for match in matches:
            names = (src[match.src].name, trg[match.trg].name)
            for bead in match.beads:
                if fmt != "vecalign" and min_score is not None and bead.score < min_score:
                    written.dropped += 1
                    continue
                write(f, names, bead, src[match.src].sentences, trg[match.trg].sentences)
                written.beads += 1
    return written
