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
from ..text.languages import UNDETERMINED
from .calibration import Calibration, Scored, read_calibration
from .predictor import LABEL_PREFIX, LINES_AT_ONCE, Columns, Predictor, batch_text
from .scripts import allowed_labels, label_script, line_lengths, script_ids

SHIPPED_FILE = "laser-lid.ftz"


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
    """Which language each line is in, by a fastText classifier, the script first: a line gets
    only labels of its main script (laser.lid.scripts), the only one where its script has one,
    `und` where it has no letters; probabilities calibrated where the model has a calibration
    beside it (laser.lid.calibration)."""

    def __init__(self, path: Optional[str | os.PathLike] = None, calibrated: bool = True):
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
        self.calibration: Optional[Calibration] = read_calibration(self.path) if calibrated \
            else None
        self._rules = ScriptRules(self.labels, self._predictor)

    def identify(self, lines: Iterable[str], top: int = 1,
                 min_prob: float = 0.0) -> list[list[Guess]]:
        """The `top` likeliest languages of each line, likeliest first, those of probability
        `min_prob` or more (a line without letters, without anything the model knows or
        without a guess that likely: one Guess `und` with probability 0)."""
        return [list(map(Guess, codes, probabilities))
                for codes, probabilities in zip(*self.ranked(lines, top, min_prob))]

    def ranked(self, lines: Iterable[str], top: int = 1, min_prob: float = 0.0) -> Ranked:
        """`identify` as plain lists: each line's codes and their probabilities."""
        lines = list(lines)
        return self.guesses(batch_text(lines), len(lines), top, min_prob).ranked()

    def guesses(self, text: bytes, lines: int, top: int = 1,
                min_prob: float = 0.0) -> "Guesses":
        """The `top` likeliest languages of each of `lines` lines of UTF-8 `text` (separated
        by '\\n'), of probability `min_prob` or more. Its words are those fastText reads once
        laser has joined them by single spaces: any Unicode space separates them (a NUL too,
        for fastText)."""
        k = max(1, min(top, len(self.labels)))
        found = self._predictor.hidden_text(text, lines, unicode_spaces=True)
        scripts = script_ids(text, lines)
        lengths = line_lengths(text, found.tokens, scripts) if self.calibration else None
        labels = np.full((lines, k), -1, np.int64)
        probabilities = np.zeros((lines, k), np.float32)
        for first in range(0, lines, LINES_AT_ONCE):  # bounded [lines, labels] scores
            part = scripts[first:first + LINES_AT_ONCE]
            for script in np.unique(part).tolist():
                rows = np.flatnonzero(part == script) + first
                chosen, chances = self._guess(found.hidden[rows], script, k,
                                              None if lengths is None else lengths[rows])
                labels[rows, :chosen.shape[1]] = chosen
                probabilities[rows, :chosen.shape[1]] = chances
        labels[probabilities < min_prob] = -1
        undetermined = (labels[:, 0] < 0) | ((found.counts == 0)
                                             & (self._rules.only[scripts] < 0))
        labels[undetermined] = -1
        labels[undetermined, 0] = len(self.labels)  # und
        probabilities = np.minimum(probabilities, np.float32(1.0))
        probabilities[labels < 0] = 0.0
        probabilities[undetermined] = 0.0
        return Guesses(self._codes[labels], probabilities)

    def _guess(self, hidden: np.ndarray, script: int, k: int,
               lengths: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The k best labels (indices) of lines of one main script, among the labels it allows,
        and their probabilities (calibrated by the lines' `lengths` in words where the model
        has a calibration): a script's only label with 1; none for a script that allows none
        (no letters)."""
        columns = self._rules.columns[script]
        if self._rules.only[script] >= 0:
            return (np.full((len(hidden), 1), self._rules.only[script], np.int64),
                    np.ones((len(hidden), 1), np.float32))
        if columns is None:
            return np.full((len(hidden), 1), -1, np.int64), np.zeros((len(hidden), 1), np.float32)
        scores = self._predictor.scores(hidden, columns)
        k = min(k, len(columns.labels))
        chosen, chances = self._predictor.top(scores, k) if self.calibration is None \
            else self.calibration.top(scores, k, lengths)
        return np.where(chosen >= 0, columns.labels[np.maximum(chosen, 0)], -1), chances

    def scored(self, lines: Sequence[str], gold: Sequence[str]) -> Scored:
        """The lines a calibration can be fitted on, with their scores over every label (-inf
        for those their script does not allow) and their lengths in words: those whose gold
        label is a label of the model that their script allows, among others (not `und`, not
        the only label of a script)."""
        text = batch_text(lines)
        found = self._predictor.hidden_text(text, len(lines), unicode_spaces=True)
        scripts = script_ids(text, len(lines))
        lengths = line_lengths(text, found.tokens, scripts)
        index = {label: position for position, label in enumerate(self.labels)}
        golden = np.array([index.get(label, -1) for label in gold], np.int64)
        fitted = ((golden >= 0) & (found.counts > 0) & (self._rules.only[scripts] < 0)
                  & self._rules.allowed[scripts, np.maximum(golden, 0)])
        scores = self._predictor.scores(found.hidden[fitted])
        scores[~self._rules.allowed[scripts[fitted]]] = -np.inf
        return Scored(scores, golden[fitted], lengths[fitted])

    def best(self, lines: Iterable[str]) -> list[str]:
        """The likeliest language of each line."""
        return [codes[0] for codes in self.ranked(lines)[0]]


class ScriptRules:
    """What a line's main script (its id: laser.lid.scripts) leaves of a model's labels: which
    it allows [scripts, labels] and their output columns (None: none), and the only label of a
    script that allows one (-1 for the others)."""

    def __init__(self, labels: Sequence[str], predictor: Predictor):
        self.allowed = allowed_labels(labels)
        scripted = np.array([label_script(label) is not None for label in labels], bool)
        single = (self.allowed.sum(axis=1) == 1) & (self.allowed & scripted).any(axis=1)
        self.only = np.where(single, self.allowed.argmax(axis=1), -1).astype(np.int64)
        self.columns: list[Optional[Columns]] = [
            predictor.columns(np.flatnonzero(row)) if row.any() else None
            for row in self.allowed]


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
