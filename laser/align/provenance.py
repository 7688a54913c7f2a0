"""The outputs of `laser align --pair-documents`: the document pairs found
(`SRC_NAME<TAB>TRG_NAME<TAB>SCORE`, names as `laser.align.collection` gives them) and the beads
of every pair in one file, each bead with its two documents and its sentence indices
(0-based), in the format `--format` chooses. Both written atomically, the beads as the pairs
are read back."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from ..cleaning.sentences import field_text
from ..io.atomic import atomic_text_output
from .beads import Bead
from .files import OutputOptions
from .formats import Document as Sentences, jsonl_line, ladder_line, thinned, tsv_line
from .pairing import AlignedPair, Pairing


@dataclass
class WrittenBeads:
    """Beads written, and beads dropped under the minimum score."""

    beads: int = 0
    dropped: int = 0


def write_document_pairs(path: str, pairing: Pairing) -> None:
    with atomic_text_output(path) as f:
        for match in pairing.matches:
            src, trg = map(field_text, pairing.names(match))
            f.write(f"{src}\t{trg}\t{match.score:.4f}\n")


def _tsv(names: tuple[str, str], bead: Bead, src: Sentences, trg: Sentences) -> str:
    """SRC_FILE, SRC_INDICES, TRG_FILE, TRG_INDICES (comma-separated), then the tsv columns."""
    return (f"{field_text(names[0])}\t{','.join(map(str, bead.src))}\t{field_text(names[1])}\t"
            f"{','.join(map(str, bead.trg))}\t{tsv_line(bead, src, trg)}")


def _jsonl(names: tuple[str, str], bead: Bead, src: Sentences, trg: Sentences) -> str:
    """The jsonl record with `src_document` and `trg_document` first."""
    record = {"src_document": names[0], "trg_document": names[1],
              **json.loads(jsonl_line(bead, src, trg))}
    return json.dumps(record, ensure_ascii=False) + "\n"


def _vecalign(names: tuple[str, str], bead: Bead, src: Sentences, trg: Sentences) -> str:
    """SRC_FILE, TRG_FILE and the bead's ladder line."""
    return f"{field_text(names[0])}\t{field_text(names[1])}\t{ladder_line(bead, src, trg)}"


WRITERS = {"tsv": _tsv, "jsonl": _jsonl, "vecalign": _vecalign}


def write_document_beads(path: str, pairs: Iterable[AlignedPair],
                         output: OutputOptions = OutputOptions()) -> WrittenBeads:
    """Every pair's beads, pair after pair as `pairs` come; with a minimum score, the text
    formats leave out weaker beads and count them, as `laser align` does for one pair."""
    line, written = WRITERS[output.format], WrittenBeads()
    with atomic_text_output(path) as f:
        for pair in pairs:
            sides = Sentences(pair.sentences[0]), Sentences(pair.sentences[1])
            for bead in pair.beads:
                if thinned(bead, output.format, output.min_score):
                    written.dropped += 1
                    continue
                f.write(line(pair.names, bead, *sides))
                written.beads += 1
    return written
