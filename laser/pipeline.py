"""Whole-file jobs, streamed in chunks: embed a text file, or write one of its preprocessing stages."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Optional

import numpy as np
from tqdm import tqdm

from .io.embeddings import EmbeddingWriter
from .models.encoder import Encoder
from .errors import LaserError
from .io.text import STDIN, atomic_text_output, batched, read_lines
from .version import __version__

CHUNK_LINES = 10000
STAGES = ("tok", "bpe")


@dataclass
class EmbedReport:
    """What `embed_file` wrote, also saved as the output's `.json` provenance sidecar."""

    output: str
    rows: int
    dim: int
    dtype: str
    format: str
    lang: str
    model_encoder: str
    model_sha256: str
    bpe_backend: str
    max_tokens: int
    max_length: Optional[int]
    laser_version: str = __version__
    sacremoses_version: str = metadata.version("sacremoses")


def _count_lines(path: str) -> Optional[int]:
    """Line count for the progress bar (None for stdin); a final line without newline counts."""
    if path == STDIN:
        return None
    count, last = 0, b"\n"
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def _progress(path: str, show: bool, unit: str = "sent") -> tqdm:
    """A progress bar on stderr when it is a terminal and `show` is set."""
    total = _count_lines(path) if show and os.path.isfile(path) else None
    return tqdm(total=total, unit=unit, disable=None if show else True, dynamic_ncols=True,
                leave=False)


def _check_input(path: str) -> None:
    if path != STDIN and not os.path.isfile(path):
        kind = "is a directory, not a text file" if os.path.isdir(path) else "no such file"
        raise LaserError(f"{path}: {kind}")


def embed_file(encoder: Encoder, input_path: str, output_path: str, lang: str,
               fmt: str = "npy", fp16: bool = False, progress: bool = True,
               provenance: bool = True) -> EmbedReport:
    """Embed every line of `input_path` into `output_path`; one row per line, written atomically."""
    _check_input(input_path)
    dtype = np.float16 if fp16 else np.float32
    with EmbeddingWriter(output_path, encoder.dim, fmt=fmt, dtype=dtype) as writer, \
            _progress(input_path, progress) as bar:
        for chunk in batched(read_lines(input_path), CHUNK_LINES):
            writer.write(encoder.encode(chunk, lang))
            bar.update(len(chunk))
    report = EmbedReport(
        output=str(output_path), rows=writer.rows, dim=encoder.dim, dtype=np.dtype(dtype).name,
        format=fmt, lang=lang, model_encoder=str(encoder.files.encoder.resolve()),
        model_sha256=encoder.files.sha256(), bpe_backend=encoder.bpe.backend,
        max_tokens=encoder.max_tokens, max_length=encoder.max_length)
    if provenance:
        _write_json(f"{output_path}.json", asdict(report))
    return report


def preprocess_file(encoder: Encoder, input_path: str, output_path: str, lang: str,
                    stage: str, progress: bool = True) -> int:
    """Write the tokenised (`tok`) or BPE (`bpe`) text of every line; returns the line count."""
    if stage not in STAGES:
        raise LaserError(f"unknown stage {stage!r}; choose tok or bpe")
    _check_input(input_path)
    lines = 0
    with atomic_text_output(output_path) as out, _progress(input_path, progress) as bar:
        for chunk in batched(read_lines(input_path), CHUNK_LINES):
            processed = encoder.tokenize(chunk, lang)
            if stage == "bpe":
                processed = encoder.apply_bpe(processed)
            if len(processed) != len(chunk):
                raise LaserError(f"{input_path}: preprocessing returned {len(processed)} lines "
                                 f"for {len(chunk)}")
            out.writelines(line + "\n" for line in processed)
            lines += len(chunk)
            bar.update(len(chunk))
    return lines


def _write_json(path: str, data: dict) -> None:
    with atomic_text_output(path) as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
