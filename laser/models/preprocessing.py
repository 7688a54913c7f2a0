"""How is text prepared for a model? The preprocessing of each model family behind one
interface, chosen per model.

A `Preprocessor` turns raw lines into the subword lines the encoder reads, in two stages:
`tokenize(lines, lang)` (the text stage) and `segment(lines)` (the subword stage). Commands only
use this interface, so a new family is a new class here plus a line in `FAMILIES`.

* LASER1 (`*.fcodes`): stages `tok` (Moses tokeniser, jieba/MeCab, Greek romanisation,
  lower-casing; `Tokenizer`) and `bpe` (fastBPE).
* LASER2 (`*.spm`): stages `pre` and `spm`, as the official `text_processing.SPMApply()`:
  `remove-non-printing-char.perl`, `normalize-punctuation.perl -l LANG`, Python `str.lower()`,
  then SentencePiece pieces. No Moses tokeniser, segmenter or romanisation on this path.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Optional, Sequence

from ..errors import LaserError
from ..text import moses
from ..text.languages import resolve
from ..text.tokenizer import Tokenizer
from .files import LASER1, LASER2, ModelFiles


class Preprocessor(ABC):
    """Raw lines -> text stage -> subword stage (what the encoder reads)."""

    family: str
    stages: tuple[str, str]  # (text stage, subword stage), e.g. ("tok", "bpe")
    generation: str  # the model's generation (for messages): the family, or laser3

    @property
    @abstractmethod
    def backend(self) -> str:
        """What applies the subwords (for provenance records)."""

    @abstractmethod
    def tokenize(self, lines: Sequence[str], lang: str) -> list[str]:
        """The text stage of each line."""

    @abstractmethod
    def segment(self, lines: Sequence[str]) -> list[str]:
        """The subword stage of text-stage lines: space-separated tokens."""

    @property
    def final_stage(self) -> str:
        return self.stages[1]

    def __call__(self, lines: Sequence[str], lang: str) -> list[str]:
        """Raw lines to what the encoder reads."""
        return self.segment(self.tokenize(lines, lang))

    def check_stage(self, stage: str) -> None:
        """Refuse a stage this family does not have, in one line."""
        if stage not in self.stages:
            raise LaserError(f"{self.generation.upper()} models have no {stage!r} stage; choose "
                             f"{' or '.join(self.stages)}")

    def run_stage(self, lines: Sequence[str], lang: str, stage: str) -> list[str]:
        """Raw lines up to `stage`, which must be one of this family's stages."""
        self.check_stage(stage)
        text = self.tokenize(lines, lang)
        return self.segment(text) if stage == self.stages[1] else text


class MosesBPEPreprocessor(Preprocessor):
    """LASER1: `text_processing.Token()` then fastBPE `applybpe`."""

    family = LASER1
    stages = ("tok", "bpe")

    def __init__(self, files: ModelFiles, bpe_backend: str = "auto"):
        from ..subwords.fastbpe import BPE
        self.bpe = BPE(files.codes, files.vocab, backend=bpe_backend)
        self._tokenizers: dict[str, Tokenizer] = {}

    @property
    def backend(self) -> str:
        return self.bpe.backend

    def tokenizer(self, lang: str) -> Tokenizer:
        if lang not in self._tokenizers:
            self._tokenizers[lang] = Tokenizer(lang)
        return self._tokenizers[lang]

    def tokenize(self, lines: Sequence[str], lang: str) -> list[str]:
        tokenizer = self.tokenizer(lang)
        return [tokenizer(line) for line in lines]

    def segment(self, lines: Sequence[str]) -> list[str]:
        return self.bpe.apply_lines(lines)


def spm_normalizer(lang: str) -> Callable[[str], str]:
    """`SPMApply`'s text steps for one language: non-printing -> space, Moses punctuation
    normalisation with the language's rules, `str.lower()`."""
    normalizer = moses.normalizer(resolve(lang).moses)

    def normalize(line: str) -> str:
        return normalizer.normalize(moses.remove_non_printing(line)).lower()
    return normalize


class SentencePiecePreprocessor(Preprocessor):
    """LASER2: `text_processing.SPMApply(lower_case=True, descape=False)`."""

    family = LASER2
    stages = ("pre", "spm")

    def __init__(self, files: ModelFiles, bpe_backend: str = "auto"):
        from ..subwords.spm import SentencePiece
        self.spm = SentencePiece(files.spm)
        self._normalizers: dict[str, Callable[[str], str]] = {}

    @property
    def backend(self) -> str:
        return self.spm.backend

    def tokenize(self, lines: Sequence[str], lang: str) -> list[str]:
        if lang not in self._normalizers:
            self._normalizers[lang] = spm_normalizer(lang)
        normalize = self._normalizers[lang]
        return [normalize(line) for line in lines]

    def segment(self, lines: Sequence[str]) -> list[str]:
        return self.spm.encode_lines(lines)


FAMILIES: dict[str, type[Preprocessor]] = {
    LASER1: MosesBPEPreprocessor,
    LASER2: SentencePiecePreprocessor,
}


def preprocessor_for(files: ModelFiles, bpe_backend: str = "auto",
                     generation: Optional[str] = None) -> Preprocessor:
    """The preprocessing of the model whose files are `files` (of `generation`, default: the
    family's own)."""
    preprocessor = FAMILIES[files.family](files, bpe_backend=bpe_backend)
    preprocessor.generation = generation or files.family
    return preprocessor
