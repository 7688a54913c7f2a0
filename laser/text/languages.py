"""Language codes: ISO 639-1 and 639-3 (and 639-2/B, BCP-47-like tags) to the code the pipeline uses."""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def iso_table() -> dict[str, str]:
    """Every ISO 639 code we know, mapped to its 639-1 code ('' where it has none)."""
    text = resources.files("laser").joinpath("data/iso639.txt").read_text("ascii")
    table = {}
    for line in text.splitlines():
        three, _, two = line.partition(" ")
        table[three] = two
        if two:
            table[two] = two
    return table


@dataclass(frozen=True)
class Language:
    """How one language is preprocessed."""

    code: str    # as the user gave it
    moses: str   # the `-l` code of the Moses scripts (ISO 639-1 where one exists)
    known: bool  # a real ISO 639 code

    @property
    def segmenter(self) -> str | None:
        """The extra word segmenter LASER runs after Moses: 'jieba', 'mecab' or None."""
        return {"zh": "jieba", "ja": "mecab"}.get(self.moses)

    @property
    def romanize(self) -> bool:
        """Greek is romanised (transliterate, reversed) before lower-casing."""
        return self.moses == "el"


class UnknownLanguageWarning(UserWarning):
    """A language code that is not ISO 639: the generic Moses rules are used."""


@lru_cache(maxsize=None)
def resolve(code: str) -> Language:
    """Resolve `de`, `deu`, `ger`, `zh-Hans`, `cmn_Hani`, `ja-JP`, `igbo` ... to a Language."""
    base = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    table = iso_table()
    if base not in table:
        base = _base_of_name(code)
    if base not in table:
        warnings.warn(f"unknown language code {code!r}: using the generic Moses rules",
                      UnknownLanguageWarning, stacklevel=2)
        return Language(code, base, known=False)
    return Language(code, table[base] or base, known=True)


def _base_of_name(name: str) -> str:
    """The ISO 639-3 code of an English language name (`igbo` -> `ibo`), else ''."""
    from .flores import flores_codes_of_name  # here: flores imports this module
    codes = flores_codes_of_name(name)
    return codes[0].split("_")[0] if codes else ""
