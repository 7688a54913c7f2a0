"""Whole-file jobs, streamed in chunks: embed a text file, or write one of its preprocessing stages."""
from __future__ import annotations

import itertools
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterator, Optional, TextIO

import numpy as np

from .errors import LaserError
from .io.atomic import STDOUT, atomic_text_output, check_output_path
from .io.bad_lines import BadLines
from .io.embeddings import FORMATS, EmbeddingWriter
from .io.outputs import check_outputs
from .io.sidecar import sidecar_outputs, write_sidecar
from .io.sources import FAIL
from .io.text import check_input, count_lines, read_lines
from .lid.files import languages_output, write_batch
from .lid.model import Ranked, shipped_model_path
from .models.files import ModelFiles
from .models.routes import language_models
from .text.languages import AUTO
from .progress import progress_bar, shows_progress
from .version import __version__

if TYPE_CHECKING:
    from .encoder import Encoder, Prepared

CHUNK_LINES = 10000
FIRST_CHUNK_LINES = 1000
# How often Python hands the GIL over while a chunk is preprocessed beside the encoder, instead of
# every 5 ms: the batch threads need it for a moment between batches of a few milliseconds.
GIL_SWITCH_SECONDS = 0.0005

# The rows of a chunk of lines, one per line, and with lang `auto` each line's identified
# languages (likeliest first; None otherwise).
EmbeddedChunk = tuple[np.ndarray, Optional[Ranked]]
# Embeds one chunk of lines (encoder, lines, lang).
ChunkEncoder = Callable[["Encoder", list[str], str], EmbeddedChunk]


def encode_sentences(encoder: Encoder, lines: list[str], lang: str) -> EmbeddedChunk:
    """Each line is one sentence: the encoder's row of it."""
    prepared = encoder.prepare(lines, lang)
    return encoder.encode_ids(prepared), prepared.guesses


@dataclass(frozen=True)
class EmbedOptions:
    """How `embed_file` works: language, `npy` or headerless `raw`, float16, progress bar on
    stderr, the provenance sidecar OUTPUT.json, chunk size, preprocessing ahead of encoding,
    what a line is (`encode`: one sentence by default; `laser.apps.documents` embeds whole
    documents) and what becomes of lines that are not UTF-8 text (`bad_lines`: fail, replace,
    or skip, which leaves rows for the lines kept only, for callers that read the lines again
    the same way, as `laser dedup`; it counts them for the sidecar)."""

    lang: str
    fmt: str = "npy"
    fp16: bool = False
    progress: bool = False
    provenance: bool = True
    chunk_lines: int = CHUNK_LINES
    encode: ChunkEncoder = encode_sentences
    rows: str = "sentences"  # what a row is, recorded in the sidecar
    prefetch: bool = True  # preprocess the next chunk in a background thread while one encodes
    lang_out: Optional[str] = None  # with lang `auto`: each line's identified languages, here
    bad_lines: BadLines = field(default_factory=BadLines)


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
    model_name: str  # official name, declared name or checkpoint stem (laser.models.spaces)
    model_space: str  # the embedding space of the rows: only rows of one space may be compared
    model_family: str  # the generation: laser1, laser2 or laser3
    model_files: dict
    model_files_sha256: dict
    model_network: dict  # kind (bilstm, transformer), pooling, dim, ...
    bpe_backend: str  # what applied the subwords: fastbpe, python or sentencepiece VERSION
    max_tokens: int
    max_length: Optional[int]
    quantize: Optional[str]  # None: float32 weights; int8: dynamically quantized network
    runtime: str  # what ran the network: torch VERSION, or onnxruntime VERSION (int8 BiLSTMs)
    rows_are: str = "sentences"
    lid_model: Optional[str] = None  # with lang `auto`: the language-ID model that chose them
    lang_fallback: Optional[str] = None  # with lang `auto`: the language of the `und` lines
    # with lang `auto`: each identified language's lines and the model that embedded them
    languages: Optional[dict] = None
    seconds: float = field(default=0.0, compare=False)
    laser_version: str = __version__
    # with --bad-lines replace: the policy, how many lines had bad bytes replaced, the first few
    bad_lines: Optional[dict] = None

    def summary(self) -> str:
        """One line for stderr: rows, shape, time, speed and the model used (its directory),
        and the lines other models embedded (`--lang auto`)."""
        rate = self.rows / self.seconds if self.seconds > 0 else float("inf")
        unit = self.rows_are.split(":")[0]
        target = "standard output" if self.output == STDOUT else self.output
        return (f"wrote {self.rows} x {self.dim} {self.dtype} embeddings to {target} "
                f"in {duration_text(self.seconds)} ({rate:,.0f} {unit}/s) with the model in "
                f"{os.path.dirname(self.model_encoder)}{self.routed_text()}")

    def routed_text(self) -> str:
        """`; 12 lines of wol_Latn by laser3-wol_Latn`, for each language another model embedded."""
        routed = [f"{record['lines']} line{'s' * (record['lines'] != 1)} of {lang} by "
                  f"{record['model']}"
                  for lang, record in (self.languages or {}).items()
                  if record["model"] != self.model_name]
        return "".join(f"; {text}" for text in routed)


def duration_text(seconds: float) -> str:
    """A duration as people read it: `12.3 s`, and under a second `31.2 ms` (never `0.0 s`)."""
    if seconds >= 1:
        return f"{seconds:.1f} s"
    return f"{seconds * 1000:.3g} ms"


def _progress(path: str, show: bool, unit: str = "sent"):
    """A progress bar of the lines of `path` on stderr when it is a terminal and `show` is set."""
    total = count_lines(path) if shows_progress(show) else None
    return progress_bar(show, total=total, unit=unit)


def chunk_sizes(largest: int) -> Iterator[int]:
    """FIRST_CHUNK_LINES, then twice as many each chunk up to `largest`: nothing overlaps the
    first chunk's preprocessing, so it is kept short."""
    size = min(FIRST_CHUNK_LINES, largest)
    while True:
        yield size
        size = min(2 * size, largest)


def _chunks(path: str, largest: int, show: bool,
            bad: BadLines = FAIL) -> Iterator[list[str]]:
    """The lines of `path` (read as `bad` says) in chunks growing to `largest` lines, counted
    on a progress bar."""
    with _progress(path, show) as bar:
        lines = read_lines(path, bad)
        for size in chunk_sizes(largest):
            chunk = list(itertools.islice(lines, size))
            if not chunk:
                return
            yield chunk
            bar.update(len(chunk))


def _prepared(encoder: Encoder, chunks: Iterator[list[str]], lang: str,
              prefetch: bool) -> Iterator[Prepared]:
    """Each chunk's id sequences; with `prefetch`, chunk i+1 is preprocessed in a background
    thread while the caller encodes chunk i (torch and ONNX Runtime release the GIL while they
    compute, and Python switches threads every GIL_SWITCH_SECONDS meanwhile). Chunks are read
    here, on the caller's thread, so an interrupt never waits for a read from a slow stdin."""
    if not prefetch:
        yield from (encoder.prepare(chunk, lang) for chunk in chunks)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="laser-prepare") as pool, \
            gil_switch_interval(GIL_SWITCH_SECONDS):
        pending = None
        for chunk in chunks:
            submitted = pool.submit(encoder.prepare, chunk, lang)
            if pending is not None:
                yield pending.result()
            pending = submitted
        if pending is not None:
            yield pending.result()


@contextmanager
def gil_switch_interval(seconds: float) -> Iterator[None]:
    """Python's thread switch interval set to `seconds` for the block, then restored."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def _embedded_chunks(encoder: Encoder, chunks: Iterator[list[str]],
                     options: EmbedOptions) -> Iterator[EmbeddedChunk]:
    """The rows (and identified languages) of each chunk. Sentences are preprocessed one chunk
    ahead (`options.prefetch`); other kinds of line (documents) go through `options.encode`."""
    if options.encode is not encode_sentences:
        yield from (options.encode(encoder, chunk, options.lang) for chunk in chunks)
        return
    for prepared in _prepared(encoder, chunks, options.lang, options.prefetch):
        yield encoder.encode_ids(prepared), prepared.guesses


def counted_languages(chunks: Iterator[EmbeddedChunk], counts: Counter,
                      out: Optional[TextIO]) -> Iterator[np.ndarray]:
    """The rows of each chunk, its lines' identified languages counted in `counts` (by the
    likeliest) and written to `out` when given, as `laser lid` prints them."""
    for rows, guesses in chunks:
        if guesses is not None:
            counts.update(codes[0] for codes in guesses[0])
            if out is not None:
                write_batch(out, *guesses)
        yield rows


def check_job(input_path: str, output_path: str) -> None:
    """Refuse a bad input or an unwritable output before any work."""
    check_input(input_path)
    check_output_path(output_path)


def embed_file(encoder: Encoder, input_path: str, output_path: str,
               options: Optional[EmbedOptions] = None, **fields) -> EmbedReport:
    """Embed every line of `input_path` into `output_path`; one row per line, written atomically.
    How: `options`, or its fields as keywords (`lang="fr"`), which also override `options`'."""
    options = replace(options, **fields) if options else EmbedOptions(**fields)
    if options.fmt not in FORMATS:
        raise LaserError(f"unknown output format {options.fmt!r}; choose npy or raw")
    check_embed_job(input_path, output_path, options)
    started = time.perf_counter()
    dtype = np.float16 if options.fp16 else np.float32
    counts: Counter = Counter()
    with EmbeddingWriter(output_path, encoder.dim, fmt=options.fmt, dtype=dtype) as writer, \
            languages_output(options.lang_out) as languages:
        chunks = _chunks(input_path, options.chunk_lines, options.progress, options.bad_lines)
        _write_behind(writer, counted_languages(_embedded_chunks(encoder, chunks, options),
                                                counts, languages))
    report = EmbedReport(
        output=str(output_path), rows=writer.rows, dtype=np.dtype(dtype).name, format=options.fmt,
        lang=options.lang, rows_are=options.rows, **encoder_fields(encoder),
        **language_fields(options, counts, encoder.files, encoder.lang_fallback),
        seconds=time.perf_counter() - started,
        bad_lines=options.bad_lines.record() if options.bad_lines.policy != "fail" else None)
    finish_report(report, options)
    return report


def language_fields(options: EmbedOptions, counts: Counter, files: ModelFiles,
                    fallback: str) -> dict:
    """What an `EmbedReport` of lang `auto` records: the language-ID model, the language of
    its `und` lines, and each identified language's lines (`und` too) with the model that
    embedded them (`laser.models.routes`)."""
    if options.lang != AUTO:
        return {}
    return dict(lid_model=shipped_model_path().name, lang_fallback=fallback,
                languages=language_models(counts, files, fallback))


def check_embed_job(input_path: str, output_path: str, options: EmbedOptions,
                    sentences_out: Optional[str] = None) -> None:
    """Refuse, before any work, a bad input, --lang-out without --lang auto, and outputs (the
    embeddings, their sidecar, --lang-out, --sentences-out) that cannot be written or of which
    two are one."""
    check_input(input_path)
    if options.lang_out and options.lang != AUTO:
        raise LaserError("--lang-out goes with --lang auto")
    check_outputs({"--output": output_path,
                   **(sidecar_outputs("--output", output_path) if options.provenance else {}),
                   "--lang-out": options.lang_out, "--sentences-out": sentences_out})


def _write_behind(writer: EmbeddingWriter, chunks: Iterator[np.ndarray]) -> None:
    """Each chunk's rows written in a background thread while the next chunk is embedded (a
    write releases the GIL); one write at a time, in order, its error raised here."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="laser-write") as background:
        pending = None
        for rows in chunks:
            if pending is not None:
                pending.result()
            pending = background.submit(writer.write, rows)
        if pending is not None:
            pending.result()


def encoder_fields(encoder: Encoder) -> dict:
    """What an `EmbedReport` records about the model that embedded."""
    from .models.spaces import model_identity
    digests = encoder.files.file_sha256()
    identity = model_identity(encoder.files)
    return dict(dim=encoder.dim, model_encoder=str(encoder.files.encoder.resolve()),
                model_sha256=digests["encoder"], model_name=identity.name,
                model_space=identity.space, model_family=encoder.family,
                model_files=encoder.files.describe(), model_files_sha256=digests,
                model_network=encoder.network.describe(), bpe_backend=encoder.preprocessor.backend,
                max_tokens=encoder.max_tokens, max_length=encoder.max_length,
                quantize=encoder.quantize, runtime=encoder.runtime)


def finish_report(report: EmbedReport, options: EmbedOptions) -> None:
    """Write the provenance sidecar of a finished output, when `options` ask for one."""
    if options.provenance:
        record = asdict(report)
        del record["seconds"]
        write_sidecar(report.output, record)


def preprocess_file(encoder: Encoder, input_path: str, output_path: str, lang: str,
                    stage: Optional[str] = None, progress: bool = False) -> int:
    """Write one preprocessing stage of every line (default: the model's last, what the encoder
    reads): `tok`/`bpe` for LASER1 models, `pre`/`spm` for LASER2 ones. Returns the line count."""
    preprocessor = encoder.preprocessor
    stage = stage or preprocessor.final_stage
    preprocessor.check_stage(stage)
    check_job(input_path, output_path)
    lines = 0
    with atomic_text_output(output_path) as out:
        for chunk in _chunks(input_path, CHUNK_LINES, progress):
            processed = preprocessor.run_stage(chunk, lang, stage)
            if len(processed) != len(chunk):
                raise LaserError(f"{input_path}: preprocessing returned {len(processed)} lines "
                                 f"for {len(chunk)}")
            out.writelines(line + "\n" for line in processed)
            lines += len(chunk)
    return lines
