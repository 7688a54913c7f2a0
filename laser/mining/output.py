"""Writing mined pairs: the official TSV, 0-based line ids, or JSON lines, atomically."""
from __future__ import annotations

import itertools
import json
from typing import Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..io.text import line_texts
from .corpus import Corpus
from .retrieval import Pairs

OUTPUT_FORMATS = ("tsv", "ids", "jsonl")
# What --provenance adds to each JSON record (and, in this order, to each TSV or ids line).
PROVENANCE_FIELDS = ("src_file", "src_file_line", "trg_file", "trg_file_line")


def _rows(pairs: Pairs, fmt: str, mode: str, src_text: dict, trg_text: dict,
          origins: Optional[list[tuple]]) -> Iterator[str]:
    """Output lines: official TSV (score as the official tool prints it), ids, or JSON lines;
    with `origins`, each pair's (source file, line, target file, line) after them."""
    scores = pairs.score.tolist()
    origins = origins or itertools.repeat(None)
    for s, t, score, origin in zip(pairs.src.tolist(), pairs.trg.tolist(), scores, origins):
        if fmt == "jsonl":
            record = {"score": score if score == score else None, "src_line": s, "trg_line": t,
                      "src": src_text[s], "trg": trg_text[t]}
            if origin:
                record.update(zip(PROVENANCE_FIELDS, origin))
            yield json.dumps(record, ensure_ascii=False) + "\n"
            continue
        if fmt == "ids":
            row = f"{score!r}\t{s}\t{t}"
        elif mode == "search":
            row = trg_text[t]
        else:
            shown = repr(score) if mode == "mine" else str(np.float32(score))
            row = f"{shown}\t{src_text[s]}\t{trg_text[t]}"
        yield row + ("".join(f"\t{value}" for value in origin) if origin else "") + "\n"


def pair_origins(pairs: Pairs, src: Corpus, trg: Corpus) -> list[tuple]:
    """(source file, 1-based line in it, target file, line) of every pair."""
    src_files, src_lines = src.locate(pairs.src)
    trg_files, trg_lines = trg.locate(pairs.trg)
    return list(zip(src_files, src_lines.tolist(), trg_files, trg_lines.tolist()))


def write_pairs(output: str, pairs: Pairs, src: Corpus, trg: Corpus, fmt: str = "tsv",
                mode: str = "mine", provenance: bool = False) -> None:
    """Write `pairs` (line numbers) atomically; texts are read back from the corpora as needed;
    `provenance` adds each pair's files and lines."""
    if fmt not in OUTPUT_FORMATS:
        raise LaserError(f"unknown output format {fmt!r}; "
                         f"choose one of {', '.join(OUTPUT_FORMATS)}")
    needs_src = fmt == "jsonl" or (fmt == "tsv" and mode != "search")
    src_text = line_texts(src.path, pairs.src) if needs_src else {}
    trg_text = line_texts(trg.path, pairs.trg) if fmt != "ids" else {}
    origins = pair_origins(pairs, src, trg) if provenance else None
    with atomic_text_output(output) as out:
        out.writelines(_rows(pairs, fmt, mode, src_text, trg_text, origins))
