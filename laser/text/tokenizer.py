"""LASER's tokenisation chain for one language, line by line, as `text_processing.Token()` runs it.

remove non-printing characters -> Moses punctuation normalisation -> Moses tokenisation ->
jieba (zh) or MeCab (ja) -> Greek romanisation (el) -> lower-casing.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from . import moses
from ..errors import LaserError
from .languages import Language, resolve
from .segmenters import segmenter


class Tokenizer:
    """The text a LASER encoder's BPE step receives, for one language."""

    def __init__(self, lang: str | Language):
        self.language = lang if isinstance(lang, Language) else resolve(lang)
        code = self.language.moses
        self._normalizer = moses.normalizer(code)
        self._tokenizer = moses.tokenizer(code)
        self._segment = segmenter(self.language.segmenter) if self.language.segmenter else None
        self._translit = _greek_romanizer() if self.language.romanize else None

    def __call__(self, line: str) -> str:
        """Tokenise one line (no line break in it)."""
        text = moses.remove_non_printing(line)
        text = self._normalizer.normalize(text)
        text = self._tokenizer.tokenize_line(text)
        if self._segment is not None:
            text = self._segment(text)
        if self._translit is not None:
            text = self._translit(text)
        text = text.lower()
        if "\n" in text:
            raise LaserError(f"tokenisation split one line into several: {line[:60]!r}")
        return text

    def tokenize_lines(self, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            yield self(line)


def _greek_romanizer():
    from transliterate import translit
    return lambda text: translit(text, "el", reversed=True)
