"""The common path of the `laser_encoders` package under the same names, over `laser.Encoder`:
replace `from laser_encoders import ...` by `from laser.laser_encoders import ...`
(docs/models.md has the migration guide).

As there, `lang` (a FLORES-200 code, ISO 639 code or English name) picks the language's LASER3
encoder where one exists, else LASER2, downloaded on first use; `model_dir` is the download
cache (here one folder per model, default $LASER_HOME). The tokenizer normalises punctuation
with the English rules, as `laser_encoders`' `LaserTokenizer` does whatever the language.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from .errors import LaserError
from .models.files import ModelFiles
from .models.download import download_model
from .models.languages import official_model
from .models.registry import find_model, missing_files, model_path
from .models.installed import fetched_model_dir
from .search.vectors import unit_rows

if TYPE_CHECKING:
    from .encoder import Encoder

TOKENIZER_LANG = "en"
TOKENIZER_SUFFIXES = (".spm", ".cvocab")

__all__ = ["LaserEncoderPipeline", "LaserTokenizer", "SentenceEncoder", "initialize_encoder",
           "initialize_tokenizer"]


def model_name(lang: Optional[str] = None, laser: Optional[str] = None) -> str:
    """The official model `laser_encoders` would use for `lang` and `laser` (laser2/laser3)."""
    if laser not in (None, "laser2", "laser3"):
        raise LaserError(f"unknown laser={laser!r}; choose laser2 or laser3")
    if laser == "laser2":
        return "laser2"
    if lang is None:
        raise LaserError("pass lang= (a language), or laser='laser2'")
    name = official_model(lang)
    if laser == "laser3" and not name.startswith("laser3-"):
        raise LaserError(f"{lang}: there is no LASER3 encoder for it; use laser='laser2'")
    return name


def model_files(lang: Optional[str] = None, model_dir: Optional[str] = None,
                laser: Optional[str] = None) -> ModelFiles:
    """The files of that model, downloaded into `model_dir` ($LASER_HOME) on first use."""
    home = Path(model_dir) if model_dir else None
    return ModelFiles.from_dir(fetched_model_dir(model_name(lang, laser), home=home))


class LaserTokenizer:
    """Raw text -> the space-separated SentencePiece pieces the encoder reads."""

    def __init__(self, spm_model: Union[str, Path], lang: str = TOKENIZER_LANG):
        from .models.preprocessing import spm_normalizer
        from .subwords.spm import SentencePiece
        self.spm_model = Path(spm_model)
        self.lang = lang
        self._normalize = spm_normalizer(lang)
        self._spm = SentencePiece(self.spm_model)

    def tokenize(self, text: str) -> str:
        return self._spm.encode_lines([self._normalize(text)])[0]

    def tokenize_batch(self, batch: Sequence[str]) -> list[str]:
        return self._spm.encode_lines([self._normalize(text) for text in batch])

    def __call__(self, text_or_batch, batch: bool = False):
        return self.tokenize_batch(text_or_batch) if batch else self.tokenize(text_or_batch)


class SentenceEncoder:
    """Tokenised sentences (SentencePiece pieces) -> embeddings, as `laser_encoders.models`."""

    def __init__(self, encoder: "Encoder"):
        self.encoder = encoder

    def encode_sentences(self, sentences: Sequence[str],
                         normalize_embeddings: bool = False) -> np.ndarray:
        embeddings = self.encoder.encode_bpe(list(sentences))
        return unit_rows(embeddings) if normalize_embeddings else embeddings


def tokenizer_model(lang: Optional[str] = None, model_dir: Optional[str] = None,
                    laser: Optional[str] = None) -> Path:
    """The SentencePiece model of that model, downloaded on first use with its vocabulary only:
    a tokenizer needs no encoder checkpoint."""
    name = model_name(lang, laser)
    home = Path(model_dir) if model_dir else None
    spec = find_model(name)
    wanted = [file.name for file in spec.files if file.name.endswith(TOKENIZER_SUFFIXES)]
    directory = model_path(name, home)
    if set(wanted) & set(missing_files(spec, directory)):
        download_model(name, home=home, only=wanted)
    return directory / next(file for file in wanted if file.endswith(".spm"))


def initialize_tokenizer(lang: Optional[str] = None, model_dir: Optional[str] = None,
                         laser: Optional[str] = None) -> LaserTokenizer:
    """The tokenizer of the model `lang`/`laser` picks (its SentencePiece files downloaded on
    first use)."""
    return LaserTokenizer(tokenizer_model(lang, model_dir, laser))


def initialize_encoder(lang: Optional[str] = None, model_dir: Optional[str] = None,
                       spm: bool = True, laser: Optional[str] = None,
                       **options) -> SentenceEncoder:
    """The encoder of the model `lang`/`laser` picks; `spm` is accepted for compatibility (the
    SentencePiece files always come with the model). `options` go to `laser.Encoder`."""
    from .encoder import Encoder
    return SentenceEncoder(Encoder(model_files(lang, model_dir, laser), **options))


class LaserEncoderPipeline:
    """Tokenizer + encoder of one language: `encode_sentences(raw sentences)`."""

    def __init__(self, lang: Optional[str] = None, model_dir: Optional[str] = None,
                 spm: bool = True, laser: Optional[str] = None, **options):
        from .encoder import Encoder
        files = model_files(lang, model_dir, laser)
        self.tokenizer = LaserTokenizer(files.spm)
        self.encoder = SentenceEncoder(Encoder(files, **options))

    def encode_sentences(self, sentences: Sequence[str],
                         normalize_embeddings: bool = False) -> np.ndarray:
        pieces = self.tokenizer.tokenize_batch(sentences)
        return self.encoder.encode_sentences(pieces, normalize_embeddings)
