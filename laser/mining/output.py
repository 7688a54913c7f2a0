"""Writing mined pairs: the official TSV, 0-based line ids, or JSON lines, atomically."""
from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output
from ..io.text import line_texts
from .corpus import Corpus
from .retrieval import Pairs

OUTPUT_FORMATS = ("tsv", "ids", "jsonl")


def _rows(pairs: Pairs, fmt: str, mode: str, src_text: dict, trg_text: dict) -> Iterator[str]:
    """Output lines: official TSV (score as the official tool prints it), ids, or JSON lines."""
    scores = pairs.score.tolist()
    for s, t, score in zip(pairs.src.tolist(), pairs.trg.tolist(), scores):
        if fmt == "ids":
            yield f"{score!r}\t{s}\t{t}\n"
        elif fmt == "jsonl":
            record = {"score": score if score == score else None, "src_line": s, "trg_line": t,
                      "src": src_text[s], "trg": trg_text[t]}
            yield json.dumps(record, ensure_ascii=False) + "\n"
        elif mode == "search":
            yield trg_text[t] + "\n"
        else:
            shown = repr(score) if mode == "mine" else str(np.float32(score))
            yield f"{shown}\t{src_text[s]}\t{trg_text[t]}\n"


def write_pairs(output: str, pairs: Pairs, src: Corpus, trg: Corpus, fmt: str = "tsv",
                mode: str = "mine") -> None:
    """Write `pairs` (line numbers) atomically; texts are read back from the corpora as needed."""
    if fmt not in OUTPUT_FORMATS:
        raise LaserError(f"unknown output format {fmt!r}; "
                         f"choose one of {', '.join(OUTPUT_FORMATS)}")
    needs_src = fmt == "jsonl" or (fmt == "tsv" and mode != "search")
    src_text = line_texts(src.path, pairs.src) if needs_src else {}
    trg_text = line_texts(trg.path, pairs.trg) if fmt != "ids" else {}
    with atomic_text_output(output) as out:
        out.writelines(_rows(pairs, fmt, mode, src_text, trg_text))
