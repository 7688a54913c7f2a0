"""Language codes: ISO 639-1 and 639-3 (and 639-2/B, BCP-47-like tags) to the code the pipeline uses."""
from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ..errors import LaserError
from .flores import flores_codes_of_name, flores_names
from .iso639 import iso_table

LIST_HINT = "`laser models --languages` lists the supported languages"
AUTO = "auto"  # --lang auto: each line's language identified (laser.lid), not one for all
UNDETERMINED = "und"  # a line without letters, or without an answer (ISO 639-3 'undetermined')
# With `auto`: the language an `und` line is preprocessed as (--lang-fallback). English: its
# rules are the generic Moses rules, and every model of the project saw English most.
DEFAULT_LANG_FALLBACK = "en"
# How alike (difflib's ratio) a code or name must be to be suggested: a 3-letter code with one
# letter wrong (0.67) is.
CLOSE_ENOUGH = 0.66


@dataclass(frozen=True)
class Language:
    """How one language is preprocessed."""

    code: str    # as the user gave it
    moses: str   # the `-l` code of the Moses scripts (ISO 639-1 where one exists)

    @property
    def segmenter(self) -> str | None:
        """The extra word segmenter LASER runs after Moses: 'jieba', 'mecab' or None."""
        return {"zh": "jieba", "ja": "mecab"}.get(self.moses)

    @property
    def romanize(self) -> bool:
        """Greek is romanised (transliterate, reversed) before lower-casing."""
        return self.moses == "el"


class UnknownLanguage(LaserError):
    """A language that is no ISO 639 code, FLORES-200 code or English language name."""


@lru_cache(maxsize=None)
def resolve(code: str) -> Language:
    """Resolve `de`, `deu`, `ger`, `zh-Hans`, `cmn_Hani`, `ja-JP`, `igbo` ... to a Language;
    anything else is an UnknownLanguage error suggesting the closest languages."""
    base = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    table = iso_table()
    if base not in table:
        base = _base_of_name(code)
    if base not in table:
        raise unknown_language(code)
    return Language(code, table[base] or base)


def unknown_language(lang: str) -> UnknownLanguage:
    """The one error for a language nobody knows, in commands and in Python alike."""
    close = closest_languages(lang)
    hint = (f"did you mean {', '.join(close)}?" if close
            else "an ISO 639 code, a FLORES-200 code or an English name")
    return UnknownLanguage(f"{lang}: unknown language ({hint}); {LIST_HINT}")


def closest_languages(lang: str, count: int = 3) -> list[str]:
    """The FLORES-200 languages whose code or English name `lang` looks most like, as
    `fra (French)` (difflib, as model names are suggested)."""
    names = flores_names()
    scripts = Counter(code.split("_")[0] for code in names)
    candidates: dict[str, str] = {}
    for code, name in names.items():
        for key in (code.split("_")[0], code.lower(), name):
            candidates.setdefault(key, code)
    matches = difflib.get_close_matches(" ".join(lang.lower().split()), candidates, n=10,
                                        cutoff=CLOSE_ENOUGH)
    chosen = list(dict.fromkeys(candidates[match] for match in matches))[:count]
    # The ISO 639-3 part alone where it names one FLORES-200 language (fra), else the whole code.
    shown = [code if scripts[code.split("_")[0]] > 1 else code.split("_")[0] for code in chosen]
    return [f"{short} ({names[code].title()})" for short, code in zip(shown, chosen)]


def _base_of_name(name: str) -> str:
    """The ISO 639-3 code of an English language name (`igbo` -> `ibo`), else ''."""
    codes = flores_codes_of_name(name)
    return codes[0].split("_")[0] if codes else ""
