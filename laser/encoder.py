"""The `Encoder` facade: raw sentences in, LASER embeddings out (preprocess -> subwords -> network).

The preprocessing is chosen by the model's files (`laser.models.preprocessing`): Moses + fastBPE
for LASER1 (`*.fcodes`), SPMApply + SentencePiece for LASER2 and LASER3 (`*.spm`); the network
by the checkpoint's content (`laser.runtime.network`): a BiLSTM (LASER1, LASER2) or a fairseq
transformer (LASER3)."""
from __future__ import annotations

import functools
import threading
import warnings
from dataclasses import replace
from typing import Optional, Sequence, Union

import numpy as np

from .errors import LaserError
from .optional import require
from .runtime import RUNTIMES
from .runtime.network import BILSTM, Network, read_network_checkpoint, torch_network
from .runtime.onnx_cache import cache_bilstm, cached_bilstm
from .runtime.onnx_runtime import OnnxEncoder
from .runtime.quantize import check_quantize, reduced_precision
from .runtime.sequences import EOS, BatchRunner, embed_sequences, pad_ids, torch_batch_runner
from .models.checkpoint import bilstm_checkpoint
from .models.files import ModelFiles
from .models.preprocessing import Preprocessor, preprocessor_for
from .models.installed import official_model_dir
from .models.options import DEFAULT_MAX_TOKENS, ModelOptions
from .models.registry import note_once
from .models.resolve import ModelChoice, resolve_model
from .models.routes import routed_files
from .models.spaces import model_identity
from .lid.model import Ranked, identifier, line_languages
from .text.languages import AUTO, DEFAULT_LANG_FALLBACK, UNDETERMINED, UnknownLanguage, resolve


class TruncationWarning(UserWarning):
    """Sentences longer than max_length subword tokens (BPE or SentencePiece) were cut."""


class Prepared(list):
    """What `Encoder.prepare` makes of sentences: their id sequences (this list, one per
    sentence), the encoder that embeds each (`encoders`: the official LASER3 encoder of its
    language where one of the same space is installed, else the one that prepared it), and with
    `auto` each sentence's identified languages (`guesses`: codes and probabilities, as
    `LanguageIdentifier.ranked` gives them and `laser lid` prints them)."""

    def __init__(self, ids: list[list[int]], encoders: list[Encoder],
                 guesses: Optional[Ranked] = None):
        super().__init__(ids)
        self.encoders = encoders
        self.guesses = guesses


class Encoder:
    """A loaded LASER model. `encode(sentences, lang)` returns one float32 row per sentence.

    >>> encoder = Encoder.load("path/to/model_dir")
    >>> encoder.encode(["Hello world.", "Bonjour le monde."], lang="en").shape
    """

    def __init__(self, files: ModelFiles, device: str = "cpu",
                 max_tokens: int = DEFAULT_MAX_TOKENS, max_sentences: Optional[int] = None,
                 max_length: Optional[int] = None, bpe_backend: str = "auto",
                 quantize: Optional[str] = None, runtime: str = "auto",
                 lang_fallback: str = DEFAULT_LANG_FALLBACK):
        if max_tokens < 1:
            raise LaserError("max_tokens must be at least 1")
        if max_length is not None and max_length < 1:
            raise LaserError("max_length must be at least 1")
        self.files = files
        self.device = check_device(device)
        check_quantize(quantize, self.device)
        self.quantize = quantize
        self.network: Network = runnable_network(files, self.device, quantize,
                                                 check_runtime(runtime, self.device, quantize))
        self.dictionary = self.network.dictionary
        self.model = self.network.module  # a torch module, or an OnnxEncoder
        self.preprocessor: Preprocessor = preprocessor_for(files, bpe_backend=bpe_backend,
                                                           generation=self.network.generation)
        self.max_tokens = max_tokens
        self.max_sentences = max_sentences
        self.max_length = max_length
        self.lang_fallback = checked_fallback(lang_fallback)  # `auto`'s language of `und` lines
        # how the encoders of routed lines run (`route`): as this one
        self.running_options = dict(device=device, max_tokens=max_tokens,
                                    max_sentences=max_sentences, max_length=max_length,
                                    bpe_backend=bpe_backend, quantize=quantize, runtime=runtime,
                                    lang_fallback=lang_fallback)
        self._routes: dict[str, Optional[Encoder]] = {}  # None: this one (no cycle)
        self._routes_lock = threading.Lock()

    @classmethod
    def load(cls, model: Optional[str] = None, lang: Optional[str] = None,
             download: bool = True, **options) -> "Encoder":
        """Load `model` (a directory or a model name); else the official model of `lang` (its
        LASER3 encoder, else LASER2), downloaded now unless `download=False`; else
        $LASER_MODEL or the shipped default. On the CPU a BiLSTM runs in ONNX Runtime from a
        cached graph (`runtime="torch"` keeps it in torch; `laser.runtime.onnx_cache`);
        `quantize="int8"` runs the network in int8 on the CPU (faster, vectors within ~0.99
        cosine of float32; `laser.runtime.quantize`)."""
        if model is None and lang is not None:
            return cls(ModelFiles.from_dir(official_model_dir(lang, download)), **options)
        return cls(resolve_model(model), **options)

    @property
    def dim(self) -> int:
        return self.model.output_dim

    @property
    def runtime(self) -> str:
        """What runs the network, for provenance records: `onnxruntime VERSION` or
        `torch VERSION`."""
        if isinstance(self.model, OnnxEncoder):
            return self.model.runtime
        import torch
        return f"torch {torch.__version__}"

    @functools.cached_property
    def name(self) -> str:
        """The model's name (laser.models.spaces), as sidecars record it."""
        return model_identity(self.files).name

    @property
    def family(self) -> str:
        """The model generation: `laser1` (Moses + fastBPE + BiLSTM), `laser2` (SentencePiece +
        BiLSTM) or `laser3` (SentencePiece + transformer)."""
        return self.network.generation

    def tokenize(self, sentences: Sequence[str], lang: str) -> list[str]:
        """The text stage (`.tok` for LASER1, the pre-SentencePiece text for LASER2)."""
        return self.preprocessor.tokenize(sentences, lang)

    def apply_bpe(self, tokenized: Sequence[str]) -> list[str]:
        """The subword stage (`.bpe` or `.spm`): exactly the text the encoder reads."""
        return self.preprocessor.segment(tokenized)

    segment = apply_bpe

    def token_ids(self, bpe_line: str) -> list[int]:
        """Dictionary ids of a subword line, unknown subwords as <unk>, then </s> (after <s> for
        networks that read it)."""
        return self.network.token_ids(bpe_line)

    def encode_bpe(self, bpe_lines: Sequence[str]) -> np.ndarray:
        """Embed lines that are already tokenised and BPE-split."""
        return self.encode_ids(self.bpe_ids(bpe_lines))

    def bpe_ids(self, bpe_lines: Sequence[str]) -> list[list[int]]:
        """The id sequences of BPE lines, cut to max_length subword tokens when it is set."""
        sequences = [self.token_ids(line) for line in bpe_lines]
        return self._truncate(sequences) if self.max_length is not None else sequences

    def encode_ids(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """Embed id sequences (as `token_ids` or `prepare` make them), batched by length, rows
        in input order; those `prepare` routed to another encoder, by it."""
        if isinstance(sequences, Prepared) and any(e is not self for e in sequences.encoders):
            return self._encode_routed(sequences)
        if isinstance(self.model, OnnxEncoder):
            return self.model.embed(sequences, self.max_tokens, self.max_sentences)
        return embed_sequences(self.model, sequences, self.device, self.max_tokens,
                               self.max_sentences)

    def _encode_routed(self, prepared: Prepared) -> np.ndarray:
        """The rows of prepared sentences, each group embedded by its encoder."""
        rows = np.empty((len(prepared), self.dim), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for index, encoder in enumerate(prepared.encoders):
            groups.setdefault(id(encoder), []).append(index)
        for indices in groups.values():
            encoder = prepared.encoders[indices[0]]
            rows[indices] = encoder.encode_ids([prepared[index] for index in indices])
        return rows

    @property
    def parallel_batches(self) -> int:
        """How many `encode_batch` calls may run at once: one per core in ONNX Runtime, which runs
        a batch on one thread; one in torch, which spreads a batch over its own threads."""
        return self.model.workers if isinstance(self.model, OnnxEncoder) else 1

    @property
    def batch_tokens(self) -> int:
        """The most padded tokens one batch should hold, as `encode_ids` batches: max_tokens, or
        in ONNX Runtime its share among the batches run at once, at most BATCH_TOKENS."""
        if isinstance(self.model, OnnxEncoder):
            return self.model.batch_tokens(self.max_tokens)
        return self.max_tokens

    def encode_batch(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """Embed id sequences as one padded batch, rows in input order (`encode_ids` chooses the
        batches itself)."""
        return self._run_batch(*pad_ids(sequences))

    @functools.cached_property
    def _run_batch(self) -> BatchRunner:
        if isinstance(self.model, OnnxEncoder):
            return self.model
        return torch_batch_runner(self.model, self.device)

    def prepare(self, sentences: Sequence[str], lang: Union[str, Sequence[str]]) -> Prepared:
        """Raw sentences to the id sequences the network reads (the whole preprocessing: text
        stage, subwords, ids); `encode_ids` embeds them. `lang`: the sentences' language,
        `auto` (each sentence's language identified: `identify`) or one language per
        sentence; each sentence is preprocessed as its language and, with languages known one
        by one, by the encoder that embeds it (`route`)."""
        sentences = _sentence_list(sentences)
        guesses, languages = self.identify(sentences) if lang == AUTO \
            else (None, line_languages(sentences, lang))
        if languages is None:
            return Prepared(self._prepare_one_language(sentences, lang), [self] * len(sentences))
        ids: list[list[int]] = [[] for _ in sentences]
        encoders: list[Encoder] = [self] * len(sentences)
        for code, indices in _indices_by_language(languages).items():
            encoder = self.route(code)
            prepared = encoder._prepare_one_language([sentences[i] for i in indices], code)
            for index, sequence in zip(indices, prepared):
                ids[index], encoders[index] = sequence, encoder
        return Prepared(ids, encoders, guesses)

    def identify(self, texts: Sequence[str]) -> tuple[Ranked, list[str]]:
        """Each text's language as `laser.lid` identifies it (the guesses, for `--lang-out` and
        the sidecar), and the language it is embedded as: that one, or `lang_fallback` for an
        `und` text (no letters, or no guess)."""
        guesses = identifier().ranked(texts)
        return guesses, [self.lang_fallback if codes[0] == UNDETERMINED else codes[0]
                         for codes in guesses[0]]

    def route(self, lang: str) -> Encoder:
        """The encoder of sentences known to be in `lang`: the installed official LASER3 encoder
        of `lang` when it shares this model's space (loaded once, run as this one), else this
        one (`laser.models.routes`)."""
        if not isinstance(lang, str):
            return self  # not a language: `_prepare_one_language` refuses it
        with self._routes_lock:
            if lang not in self._routes:
                files = routed_files(lang, self.files)
                self._routes[lang] = files and self._routed_encoder(files)
            return self._routes[lang] or self

    def _routed_encoder(self, files: ModelFiles) -> Encoder:
        loaded = next((encoder for encoder in self._routes.values()
                       if encoder and encoder.files == files), None)
        loaded = loaded or Encoder(files, **self.running_options)
        if loaded.dim != self.dim:
            raise LaserError(f"{files.encoder}: {loaded.dim}-dimensional, while "
                             f"{self.files.encoder} of the same space is {self.dim}-dimensional")
        return loaded

    def _prepare_one_language(self, sentences: list[str], lang: str) -> list[list[int]]:
        if not isinstance(lang, str) or not lang.strip():
            raise LaserError(f"lang must be a language code such as 'en' or 'deu', not {lang!r}")
        return self.bpe_ids(self.preprocessor(sentences, lang))

    def encode(self, sentences: Union[str, Sequence[str]],
               lang: Union[str, Sequence[str]]) -> np.ndarray:
        """Embed raw sentences of one language (or `auto`, or one language per sentence: see
        `prepare`): (n, dim) float32, or (dim,) for a single string."""
        single = isinstance(sentences, str)
        embeddings = self.encode_ids(self.prepare([sentences] if single else sentences, lang))
        return embeddings[0] if single else embeddings

    def _truncate(self, sequences: list[list[int]]) -> list[list[int]]:
        limit = self.max_length
        specials = 1 + self.network.prepend_bos  # </s>, and <s> when the network reads it
        long = sum(len(sequence) - specials > limit for sequence in sequences)
        if long:
            warnings.warn(f"{long} sentence(s) longer than {limit} subword tokens were truncated",
                          TruncationWarning, stacklevel=3)
        keep = limit + specials - 1
        return [sequence[:keep] + [EOS] if len(sequence) - specials > limit else sequence
                for sequence in sequences]


class EncoderLoader:
    """The Encoder of `files`, run as `options` say, loaded on its first call only (so that
    precomputed inputs never load one; its `files` are known before), which also says `note`
    (once per $LASER_HOME: `note_once`); the encoder of `same` when given (the same model)."""

    def __init__(self, files: ModelFiles, options: ModelOptions = ModelOptions(),
                 note: Optional[str] = None, same: Optional[EncoderLoader] = None):
        self.files, self.options, self.note, self.same = files, options, note, same
        self.encoder: Optional[Encoder] = None

    def __call__(self) -> Encoder:
        if self.encoder is None:
            if self.note:
                note_once(self.note)
            self.encoder = self.same() if self.same else Encoder(self.files,
                                                                 **self.options.running())
        return self.encoder


def encoder_loaders(choices: Sequence[Optional[ModelChoice]], options: ModelOptions,
                    notes: bool = True) -> list[Optional[EncoderLoader]]:
    """An EncoderLoader of each chosen model, those of one model sharing one Encoder, saying
    their choice's note unless `notes` is off; None where no model was chosen."""
    loaders: list[Optional[EncoderLoader]] = []
    first: dict[ModelFiles, EncoderLoader] = {}
    for choice in choices:
        loader = choice and EncoderLoader(choice.files, options, choice.note if notes else None,
                                          first.get(choice.files))
        loaders.append(loader)
        if choice:
            first.setdefault(choice.files, loader)
    return loaders


def _sentence_list(sentences: Sequence[str]) -> list[str]:
    """The sentences as a list, refusing anything but strings without line breaks."""
    try:
        batch = list(sentences)
    except TypeError:
        raise LaserError(f"sentences must be a string or a list of strings, not "
                         f"{type(sentences).__name__}") from None
    for position, sentence in enumerate(batch):
        if not isinstance(sentence, str):
            raise LaserError(f"sentence {position} is a {type(sentence).__name__}, not a string")
        if "\n" in sentence:
            raise LaserError(f"sentence {position} contains a line break; split it first")
    return batch


def runnable_network(files: ModelFiles, device: str, quantize: Optional[str],
                     runtime: str) -> Network:
    """The network as it runs: a BiLSTM on the CPU in ONNX Runtime (from its cached graph, or
    from a graph built from the checkpoint's weights; never torch), else in torch on `device`
    (int8: dynamic quantization; fp16: float16 weights and activations)."""
    on_onnx = runtime != "torch" and device == "cpu" and quantize != "fp16"
    cached = cached_bilstm(files, quantize) if on_onnx else None
    if cached is not None:
        return cached
    checkpoint = read_network_checkpoint(files)
    if checkpoint.kind == BILSTM and on_onnx:
        return cache_bilstm(bilstm_checkpoint(checkpoint.raw, files.encoder), files, quantize)
    if runtime == "onnxruntime":
        raise LaserError(f"{files.encoder}: --runtime onnxruntime runs BiLSTM models (LASER1, "
                         f"LASER2), not this {checkpoint.kind}; use --runtime auto or torch")
    network = torch_network(checkpoint, files)
    module = network.module.to(device)
    return replace(network, module=reduced_precision(module, quantize) if quantize else module)


def check_runtime(name: str, device: str, quantize: Optional[str] = None) -> str:
    """Refuse an unknown runtime, or ONNX Runtime on a GPU or in float16."""
    if name not in RUNTIMES:
        raise LaserError(f"unknown runtime {name!r}; choose {', '.join(RUNTIMES)}")
    if name == "onnxruntime" and quantize == "fp16":
        raise LaserError("--quantize fp16 runs in torch; use --runtime auto or torch")
    if name == "onnxruntime" and device != "cpu":
        raise LaserError(f"--runtime onnxruntime runs on the CPU only, not on {device}")
    return name


def check_device(name: str) -> str:
    """`name` as a device, refusing unknown names and CUDA where there is none."""
    if name not in ("cpu", "cuda") and not name.startswith("cuda:"):
        raise LaserError(f"unknown device {name!r}; choose cpu or cuda")
    if name.startswith("cuda"):
        torch = require("torch", f"--device {name}")
        if not torch.cuda.is_available():
            raise LaserError("CUDA was asked for but no CUDA device is available")
    return name


def _indices_by_language(languages: Sequence[str]) -> dict[str, list[int]]:
    """The positions of each language's sentences, languages in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for index, language in enumerate(languages):
        groups.setdefault(language, []).append(index)
    return groups


def checked_fallback(lang: str) -> str:
    """A language `auto` may embed `und` lines as: one the preprocessing knows."""
    if not isinstance(lang, str) or lang in (AUTO, UNDETERMINED):
        raise LaserError(f"lang_fallback must be a language such as 'en', not {lang!r}")
    try:
        resolve(lang)
    except UnknownLanguage as error:
        raise LaserError(f"--lang-fallback: {error}") from None
    return lang
