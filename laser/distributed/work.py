"""What a worker does with one shard, free of Ray: load the model once, embed a line range into
its own `.npy` file (atomically), with its threads pinned to its share of the machine."""
from __future__ import annotations

import importlib.util
import io
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable, Optional, TextIO

import numpy as np

from .. import __version__
from ..errors import LaserError
from ..io.embeddings import EmbeddingWriter
from ..io.bad_lines import EMBED_BAD_LINES, BadLines
from ..io.sources import decode_lines
from ..io.text import batched
from ..lid.files import languages_output, write_batch
from ..models.files import ModelFiles
from ..text.languages import DEFAULT_LANG_FALLBACK
from .shards import Shard, read_shard

if TYPE_CHECKING:
    from ..encoder import Encoder


@dataclass(frozen=True)
class EncoderSpec:
    """How to load the same encoder on any node: absolute model paths and the encoder options."""

    files: ModelFiles
    device: str = "cpu"
    max_tokens: int = 12000
    max_length: Optional[int] = None
    bpe_backend: str = "auto"
    quantize: Optional[str] = None
    runtime: str = "auto"
    lang_fallback: str = DEFAULT_LANG_FALLBACK

    def __post_init__(self) -> None:
        absolute = {role: path.resolve() for role, path in vars(self.files).items() if path}
        object.__setattr__(self, "files", replace(self.files, **absolute))

    def load(self) -> Encoder:
        from ..encoder import Encoder
        return Encoder(self.files, device=self.device, max_tokens=self.max_tokens,
                       max_length=self.max_length, bpe_backend=self.bpe_backend,
                       quantize=self.quantize, runtime=self.runtime,
                       lang_fallback=self.lang_fallback)

    def key(self) -> dict:
        """What makes two encoders' embeddings identical: the checkpoint, the options and the
        laser version (another version may compute or record them differently)."""
        return {"laser_version": __version__,
                "model_sha256": self.files.sha256(), "files": self.files.describe(),
                "max_tokens": self.max_tokens, "max_length": self.max_length,
                "bpe_backend": self.bpe_backend, "device": self.device,
                "quantize": self.quantize, "runtime": self.runtime}


@dataclass(frozen=True)
class ShardJob:
    """Embed the lines of `shard` in `lang` into `output` (.npy of `dtype`), `chunk_lines` at a
    time as the single-process pipeline does; with lang `auto`, write the lines' identified
    languages to `languages`. A line that is not UTF-8 text fails the job, or with `bad_lines`
    `replace` is decoded with U+FFFD (`laser.io.bad_lines`)."""

    shard: Shard
    output: str
    lang: str
    dtype: str
    chunk_lines: int
    languages: Optional[str] = None
    bad_lines: str = "fail"


def pin_threads(threads: int) -> None:
    """Use `threads` cores for ONNX Runtime, torch, faiss and BLAS: a worker's share of its node,
    no more. (BLAS rounds the last bit of a product by its thread count: a single process gives
    the same bits with the same count, e.g. OMP_NUM_THREADS=1 for one-core workers.)"""
    import faiss
    from threadpoolctl import threadpool_limits
    os.environ["OMP_NUM_THREADS"] = str(threads)  # what ONNX Runtime sessions made later read
    if importlib.util.find_spec("torch") is not None:  # an optional extra
        import torch
        torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)
    threadpool_limits(threads)  # stays in force for the life of the worker


def embed_shard(encoder: Encoder, job: ShardJob) -> dict:
    """Write the embeddings of one shard: its row count (one per line, always) and its lines
    that were not UTF-8 text (`bad_lines`: count and the first few named)."""
    shard = job.shard
    data = read_shard(shard)
    bad = BadLines(job.bad_lines, "--bad-lines", EMBED_BAD_LINES)
    lines = decode_lines(shard.file_name, io.BytesIO(data), shard.start + 1, bad)
    with EmbeddingWriter(job.output, encoder.dim, fmt="npy", dtype=np.dtype(job.dtype)) as writer, \
            languages_output(job.languages) as languages:
        write_embeddings(encoder, lines, writer, job.lang, job.chunk_lines, languages)
        if writer.rows != shard.lines:
            raise LaserError(f"{shard.file_name}: lines {shard.start + 1}-{shard.stop} gave "
                             f"{writer.rows} rows, not {shard.lines}")
    return {"rows": writer.rows, "bad_lines": {"count": bad.count, "named": bad.named}}


def write_embeddings(encoder: Encoder, lines: Iterable[str], writer: EmbeddingWriter, lang: str,
                     chunk_lines: int, languages: Optional[TextIO] = None) -> None:
    """Append the rows of `lines` in `lang` to `writer`, `chunk_lines` at a time as the
    single-process pipeline does; with lang `auto`, each line's identified language to
    `languages`."""
    for chunk in batched(lines, chunk_lines):
        prepared = encoder.prepare(chunk, lang)
        writer.write(encoder.encode_ids(prepared))
        if languages is not None:
            write_batch(languages, *prepared.guesses)
