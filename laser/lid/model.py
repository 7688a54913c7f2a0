"""A fastText language-ID model (labels `__label__fra_Latn`), read and run by laser's own numpy
predictor (predictor.py): the shipped one (models/default/laser-lid.ftz) or any fastText file a
user brings (GlotLID, OpenLID, NLLB)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from ..errors import LaserError
from ..models.registry import SHIPPED_MODEL_DIRS
from . import fasttext_file
from .predictor import LABEL_PREFIX, Predictor, batch_text

SHIPPED_FILE = "laser-lid.ftz"
UNDETERMINED = "und"  # the code of a line without any text (ISO 639-3 'undetermined')


# Each line's likeliest codes and their probabilities, as two parallel lists of lists.
Ranked = tuple[list[list[str]], list[list[float]]]


@dataclass(frozen=True)
class Guess:
    """One language a line may be in: its code (FLORES-200 style) and the model's probability."""

    code: str
    probability: float


def shipped_model_path() -> Path:
    """The shipped model: inside the installed package, else in the checkout's models/."""
    for directory in SHIPPED_MODEL_DIRS:
        if (directory / SHIPPED_FILE).is_file():
            return directory / SHIPPED_FILE
    raise LaserError(f"{SHIPPED_FILE}: the shipped language-ID model is missing from this "
                     "install; pass --lid-model PATH")


def read_labels(path: str | os.PathLike) -> list[str]:
    """The labels of a fastText model file, without their prefix, read from its dictionary."""
    return [_strip(label) for label in fasttext_file.read_labels(path)]


def _strip(label: str) -> str:
    return label[len(LABEL_PREFIX):] if label.startswith(LABEL_PREFIX) else label


class LanguageIdentifier:
    """Which language each line is in, by a fastText classifier."""

    def __init__(self, path: Optional[str | os.PathLike] = None):
        self.path = Path(path) if path is not None else shipped_model_path()
        if not self.path.is_file():
            raise LaserError(f"{self.path}: no such language-ID model file")
        try:
            model = fasttext_file.read_model(self.path)
        except OSError as error:
            raise LaserError(f"{self.path}: cannot read the language-ID model "
                             f"({error.strerror or error})") from None
        self.labels = [_strip(label) for label in model.labels]
        # Each label's code, then `und`, then "" (the code of label -1: no guess)
        self._codes = np.array(self.labels + [UNDETERMINED, ""], object)
        self._predictor = Predictor(model)

    def identify(self, lines: Iterable[str], top: int = 1) -> list[list[Guess]]:
        """The `top` likeliest languages of each line, likeliest first (a line without any
        text, or without anything the model knows: one Guess `und` with probability 0)."""
        return [list(map(Guess, codes, probabilities))
                for codes, probabilities in zip(*self.ranked(lines, top))]

    def ranked(self, lines: Iterable[str], top: int = 1) -> Ranked:
        """`identify` as plain lists: each line's codes and their probabilities."""
        lines = list(lines)
        return self.guesses(batch_text(lines), len(lines), top).ranked()

    def guesses(self, text: bytes, lines: int, top: int = 1) -> "Guesses":
        """The `top` likeliest languages of each of `lines` lines of UTF-8 `text` (separated
        by '\\n'). Its words are those fastText reads once laser has joined them by single
        spaces: any Unicode space separates them (a NUL too, for fastText)."""
        found = self._predictor.predict_text(text, lines, top, unicode_spaces=True)
        guessed = (found.tokens > 0) & (found.labels[:, 0] >= 0)
        labels = np.where(guessed[:, None], found.labels, -1)
        labels[~guessed, 0] = len(self.labels)  # und
        probabilities = np.minimum(found.probabilities, np.float32(1.0))
        probabilities[~guessed] = 0.0
        return Guesses(self._codes[labels], probabilities)

    def best(self, lines: Iterable[str]) -> list[str]:
        """The likeliest language of each line."""
        return [codes[0] for codes in self.ranked(lines)[0]]


@dataclass(frozen=True)
class Guesses:
    """Each line's likeliest codes, likeliest first ("" past its last guess), and their
    probabilities; a line without a guess has `und`, probability 0."""

    codes: np.ndarray  # object [lines, top]
    probabilities: np.ndarray  # float32 [lines, top]

    @classmethod
    def of(cls, codes: list[list[str]], probabilities: list[list[float]]) -> "Guesses":
        """Guesses given as lists (`Ranked`)."""
        top = max(map(len, codes), default=1)
        table = np.full((len(codes), top), "", object)
        values = np.zeros((len(codes), top), np.float32)
        for line, (line_codes, line_probabilities) in enumerate(zip(codes, probabilities)):
            table[line, :len(line_codes)] = line_codes
            values[line, :len(line_codes)] = line_probabilities
        return cls(table, values)

    def ranked(self) -> Ranked:
        """The guesses as lists: each line's codes and their probabilities."""
        codes, probabilities = self.codes.tolist(), self.probabilities.tolist()
        if self.codes.shape[1] > 1:  # without the columns past each line's last guess
            kept = (self.codes != "").sum(axis=1).tolist()
            codes = [line[:count] for line, count in zip(codes, kept)]
            probabilities = [line[:count] for line, count in zip(probabilities, kept)]
        return codes, probabilities

    def tsv(self) -> str:
        """`laser lid`'s lines: `fra_Latn<TAB>0.9876`, then the next guesses' codes and
        probabilities on the same line (a newline after each)."""
        if not len(self.codes):
            return ""
        # Four decimals as "%.4f" writes them: a float32 times 10^4 is exact in float64.
        fixed = _four_decimals()[np.rint(self.probabilities.astype(np.float64) * 1e4)
                                 .astype(np.int64)]
        text = self.codes[:, 0] + "\t" + fixed[:, 0]
        for column in range(1, self.codes.shape[1]):
            more = self.codes[:, column] != ""
            text[more] += "\t" + self.codes[more, column] + "\t" + fixed[more, column]
        return "\n".join(text.tolist()) + "\n"


@lru_cache(maxsize=1)
def _four_decimals() -> np.ndarray:
    """"0.0000" to "1.0000", the text of each multiple of 1e-4."""
    return np.array([f"{value / 10000:.4f}" for value in range(10001)], object)


@lru_cache(maxsize=4)
def identifier(path: Optional[str] = None) -> LanguageIdentifier:
    """A loaded model, kept for the process (the shipped one when `path` is None)."""
    return LanguageIdentifier(path)


def line_languages(lines: Sequence[str], lang: str | Sequence[str]) -> Optional[list[str]]:
    """Each line's language when `lang` is a sequence (one per line); None when `lang` is one
    language for every line (`auto` is identified by the caller, which keeps the guesses)."""
    if isinstance(lang, str):
        return None
    if not isinstance(lang, Sequence):
        return None  # not a language at all: refused as one
    languages = list(lang)
    if len(languages) != len(lines):
        raise LaserError(f"{len(languages)} languages for {len(lines)} sentences: give one "
                         "language, 'auto', or one per sentence")
    return languages
