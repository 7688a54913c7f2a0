"""A fastText language-ID model (labels `__label__fra_Latn`), read by fasttext-predict: the
shipped one (models/default/laser-lid.ftz) or any file a user brings (GlotLID, OpenLID, NLLB)."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Optional, Sequence

from ..errors import LaserError
from ..models.registry import SHIPPED_MODEL_DIRS
from ..text.languages import AUTO

LABEL_PREFIX = "__label__"
SHIPPED_FILE = "laser-lid.ftz"
UNDETERMINED = "und"  # the code of a line without any text (ISO 639-3 'undetermined')
FASTTEXT_MAGIC = 793712314
# fastText's header: magic, version, then the arguments (12 int32 and a double)
HEADER = struct.Struct("<ii12id")
DICTIONARY = struct.Struct("<iiiqq")  # size, words, labels, tokens, pruned index size
ENTRY_TAIL = 9  # after each entry's NUL-terminated string: count (int64), type (int8)


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
    """The labels of a fastText model file, without their prefix, read from its header."""
    with open(path, "rb") as f:
        head = f.read(HEADER.size + DICTIONARY.size)
        if len(head) < HEADER.size + DICTIONARY.size or HEADER.unpack_from(head)[0] != FASTTEXT_MAGIC:
            raise LaserError(f"{path}: not a fastText model file")
        _, words, labels, _, _ = DICTIONARY.unpack_from(head, HEADER.size)
        entries = _entries(f)
        for _ in range(words):
            next(entries)
        return [_strip(next(entries)) for _ in range(labels)]


def _entries(f: BinaryIO) -> Iterator[str]:
    """The dictionary's strings, read in blocks."""
    buffer = b""
    while True:
        end = buffer.find(b"\0")
        while end < 0 or len(buffer) < end + 1 + ENTRY_TAIL:
            block = f.read(1 << 20)
            if not block:
                raise LaserError(f"{f.name}: a truncated fastText model file")
            buffer += block
            end = buffer.find(b"\0")
        yield buffer[:end].decode("utf-8", "replace")
        buffer = buffer[end + 1 + ENTRY_TAIL:]


def _one_line(line: str) -> str:
    """The line's words joined by single spaces (fastText reads one line up to its newline)."""
    return " ".join(line.split())


def _strip(label: str) -> str:
    return label[len(LABEL_PREFIX):] if label.startswith(LABEL_PREFIX) else label


class LanguageIdentifier:
    """Which language each line is in, by a fastText classifier."""

    def __init__(self, path: Optional[str | os.PathLike] = None):
        self.path = Path(path) if path is not None else shipped_model_path()
        if not self.path.is_file():
            raise LaserError(f"{self.path}: no such language-ID model file")
        self.labels = read_labels(self.path)
        self._model = _load(str(self.path))

    def identify(self, lines: Iterable[str], top: int = 1) -> list[list[Guess]]:
        """The `top` likeliest languages of each line, likeliest first (a line without any
        text: one Guess `und` with probability 0)."""
        predict = self._model.predict
        return [[Guess(_strip(label), min(probability, 1.0))
                 for probability, label in predict(text + "\n", top, 0.0, "replace")]
                if text else [Guess(UNDETERMINED, 0.0)]
                for text in map(_one_line, lines)]

    def best(self, lines: Iterable[str]) -> list[str]:
        """The likeliest language of each line."""
        return [guesses[0].code for guesses in self.identify(lines)]


def _load(path: str):
    """The fastText model behind the Python wrapper of fasttext-predict (or of fasttext: both
    install the module): its `predict` gives (probability, label) pairs for one line."""
    from fasttext_pybind import fasttext

    model = fasttext()
    try:
        model.loadModel(path)
    except (ValueError, RuntimeError, MemoryError) as error:
        raise LaserError(f"{path}: not a fastText model file ({error})") from None
    return model


@lru_cache(maxsize=4)
def identifier(path: Optional[str] = None) -> LanguageIdentifier:
    """A loaded model, kept for the process (the shipped one when `path` is None)."""
    return LanguageIdentifier(path)


def line_languages(lines: Sequence[str], lang: str | Sequence[str]) -> Optional[list[str]]:
    """Each line's language when `lang` is `auto` (identified) or a sequence (one per line);
    None when `lang` is one language for every line."""
    if isinstance(lang, str):
        return identifier().best(lines) if lang == AUTO else None
    if not isinstance(lang, Sequence):
        return None  # not a language at all: refused as one
    languages = list(lang)
    if len(languages) != len(lines):
        raise LaserError(f"{len(languages)} languages for {len(lines)} sentences: give one "
                         "language, 'auto', or one per sentence")
    return languages
