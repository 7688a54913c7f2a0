"""A fastText language-ID model (labels `__label__fra_Latn`), read and run by laser's own numpy
predictor (predictor.py): the shipped one (models/default/laser-lid.ftz) or any fastText file a
user brings (GlotLID, OpenLID, NLLB)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..errors import LaserError
from ..models.registry import SHIPPED_MODEL_DIRS
from . import fasttext_file
from .predictor import LABEL_PREFIX, Predictor

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
        self._predictor = Predictor(model)

    def identify(self, lines: Iterable[str], top: int = 1) -> list[list[Guess]]:
        """The `top` likeliest languages of each line, likeliest first (a line without any
        text, or without anything the model knows: one Guess `und` with probability 0)."""
        return [list(map(Guess, codes, probabilities))
                for codes, probabilities in zip(*self.ranked(lines, top))]

    def ranked(self, lines: Iterable[str], top: int = 1) -> Ranked:
        """`identify` as plain lists: each line's codes and their probabilities."""
        # The words as fastText reads them once laser has joined them by single spaces: any
        # Unicode space or line break separates them (a NUL too, for fastText).
        found = self._predictor.predict_lines(list(lines), top, unicode_spaces=True)
        codes, probabilities = [], []
        for tokens, labels, line_probabilities in zip(
                found.tokens.tolist(), found.labels.tolist(), found.probabilities.tolist()):
            if tokens and labels[0] >= 0:
                kept = [label for label in labels if label >= 0]
                codes.append([self.labels[label] for label in kept])
                probabilities.append([min(probability, 1.0)
                                      for probability in line_probabilities[:len(kept)]])
            else:
                codes.append([UNDETERMINED])
                probabilities.append([0.0])
        return codes, probabilities

    def best(self, lines: Iterable[str]) -> list[str]:
        """The likeliest language of each line."""
        return [codes[0] for codes in self.ranked(lines)[0]]


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
