"""The writing system of a line: the ISO 15924 code of the script most of its letters are in
(`Latn`, `Cyrl`, `Hani`...), read from the Unicode character names."""
from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Optional

# The first word(s) of a Unicode character name -> its ISO 15924 script code.
SCRIPTS = {
    "LATIN": "Latn", "CYRILLIC": "Cyrl", "GREEK": "Grek", "ARABIC": "Arab", "HEBREW": "Hebr",
    "DEVANAGARI": "Deva", "BENGALI": "Beng", "GURMUKHI": "Guru", "GUJARATI": "Gujr",
    "ORIYA": "Orya", "TAMIL": "Taml", "TELUGU": "Telu", "KANNADA": "Knda", "MALAYALAM": "Mlym",
    "SINHALA": "Sinh", "THAI": "Thai", "LAO": "Laoo", "TIBETAN": "Tibt", "MYANMAR": "Mymr",
    "GEORGIAN": "Geor", "HANGUL": "Hang", "ETHIOPIC": "Ethi", "KHMER": "Khmr", "ARMENIAN": "Armn",
    "THAANA": "Thaa", "TIFINAGH": "Tfng", "OL CHIKI": "Olck", "GOTHIC": "Goth", "CJK": "Hani",
    "HIRAGANA": "Jpan", "KATAKANA": "Jpan", "SYRIAC": "Syrc", "NKO": "Nkoo", "CHEROKEE": "Cher",
    "CANADIAN": "Cans", "MONGOLIAN": "Mong", "MEETEI": "Mtei", "JAVANESE": "Java",
    "BALINESE": "Bali", "BUGINESE": "Bugi", "SUNDANESE": "Sund", "COPTIC": "Copt",
    "RUNIC": "Runr", "OGHAM": "Ogam", "YI": "Yiii", "VAI": "Vaii", "ADLAM": "Adlm",
}


@lru_cache(maxsize=65536)
def char_script(char: str) -> Optional[str]:
    """The script code of a letter or mark; None for digits, punctuation, symbols, spaces."""
    if not unicodedata.category(char).startswith(("L", "M")):
        return None
    name = unicodedata.name(char, "")
    first = name.split(" ", 1)[0]
    return SCRIPTS.get(first) or SCRIPTS.get(" ".join(name.split(" ", 2)[:2]))


def line_script(line: str) -> Optional[str]:
    """The script most letters of `line` are written in (Japanese kana with kanji: `Jpan`);
    None when it has no letter of a known script."""
    counts = Counter(script for script in map(char_script, line) if script)
    if not counts:
        return None
    if counts["Jpan"] and counts["Hani"]:
        counts["Jpan"] += counts.pop("Hani")
    return counts.most_common(1)[0][0]
