"""The writing system of a line: the ISO 15924 code of its main script (`Latn`, `Cyrl`,
`Hani`...), read from the Unicode character names, and which labels of a language-ID model
each script allows (the script decides first)."""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from .kernel import kernel

# The first word(s) of a Unicode character name -> its ISO 15924 script code.
SCRIPTS = {
    "LATIN": "Latn", "CYRILLIC": "Cyrl", "GREEK": "Grek", "ARABIC": "Arab", "HEBREW": "Hebr",
    "DEVANAGARI": "Deva", "BENGALI": "Beng", "GURMUKHI": "Guru", "GUJARATI": "Gujr",
    "ORIYA": "Orya", "TAMIL": "Taml", "TELUGU": "Telu", "KANNADA": "Knda", "MALAYALAM": "Mlym",
    "SINHALA": "Sinh", "THAI": "Thai", "LAO": "Laoo", "TIBETAN": "Tibt", "MYANMAR": "Mymr",
    "GEORGIAN": "Geor", "HANGUL": "Hang", "ETHIOPIC": "Ethi", "KHMER": "Khmr", "ARMENIAN": "Armn",
    "THAANA": "Thaa", "TIFINAGH": "Tfng", "OL CHIKI": "Olck", "GOTHIC": "Goth", "CJK": "Hani",
    "HIRAGANA": "Jpan", "KATAKANA": "Jpan", "KATAKANA-HIRAGANA": "Jpan", "SYRIAC": "Syrc",
    "NKO": "Nkoo", "CHEROKEE": "Cher", "CANADIAN": "Cans", "MONGOLIAN": "Mong", "MEETEI": "Mtei",
    "JAVANESE": "Java", "BALINESE": "Bali", "BUGINESE": "Bugi", "SUNDANESE": "Sund",
    "COPTIC": "Copt", "RUNIC": "Runr", "OGHAM": "Ogam", "YI": "Yiii", "VAI": "Vaii",
    "ADLAM": "Adlm",
}
OTHER = "Zzzz"  # a letter of a script not named above (ISO 15924 'uncoded script')
WIDTHS = ("FULLWIDTH ", "HALFWIDTH ")  # ＡＢＣ and ｶﾀｶﾅ: the letters of their script
# What a line's main script allows among a model's label scripts, beyond its own code: Han
# letters alone may be Chinese (simplified or traditional), Japanese or Korean.
LABEL_SCRIPTS = {"Hani": ("Hani", "Hans", "Hant", "Jpan", "Kore"),
                 "Jpan": ("Jpan", "Hira", "Kana", "Hrkt"), "Hang": ("Hang", "Kore")}
# Scripts written without spaces between words: a line's length is counted in characters, and
# CHARACTERS_A_WORD of them make a word.
NO_SPACES = {"Hani", "Jpan", "Hira", "Kana", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"}
CHARACTERS_A_WORD = 2


def char_script(char: str) -> Optional[str]:
    """The script code of a letter or mark (`Zzzz`: a letter of another script); None for
    digits, punctuation, symbols (emoji), spaces and combining marks of no script."""
    category = unicodedata.category(char)
    if not category.startswith(("L", "M")):
        return None
    name = unicodedata.name(char, "")
    for width in WIDTHS:
        name = name.removeprefix(width)
    words = name.split(" ", 2)
    script = SCRIPTS.get(words[0]) or SCRIPTS.get(" ".join(words[:2]))
    return script or (OTHER if category.startswith("L") else None)


def unicode_ranges() -> list[tuple[int, int, str]]:
    """Every run of consecutive code points that are letters of one script: (first, last,
    code), from this Python's Unicode database (script_table.py holds them, generated)."""
    runs: list[tuple[int, int, str]] = []
    for point in range(0x110000):
        script = char_script(chr(point))
        if script is None:
            continue
        if runs and runs[-1][2] == script and runs[-1][1] == point - 1:
            runs[-1] = (runs[-1][0], point, script)
        else:
            runs.append((point, point, script))
    return runs


@lru_cache(maxsize=1)
def script_codes() -> tuple[str, ...]:
    """The scripts the kernel tells apart; a line's script id is its index here (0: none)."""
    from .script_table import RANGES
    return ("",) + tuple(sorted({code for _, _, code in RANGES}))


@lru_cache(maxsize=1)
def code_point_table() -> np.ndarray:
    """Each code point's script id (uint8, 0: not a letter), the kernel's table."""
    from .script_table import RANGES
    ids = {code: index for index, code in enumerate(script_codes())}
    table = np.zeros(0x110000, np.uint8)
    for first, last, code in RANGES:
        table[first:last + 1] = ids[code]
    return table


def script_ids(text: bytes, lines: int) -> np.ndarray:
    """The main script id of each of `lines` lines of UTF-8 `text` (separated by '\\n'): the
    script of most of its letters, not counting tokens that are addresses (holding `://` or
    `@`, or starting with `www.`); Han letters join kana where the line has kana (Japanese),
    else Hangul where it has Hangul (Korean); Latin letters weigh half beside letters of
    another script (names, borrowed terms); a tie goes to the script met first; 0 for a line
    without any letter (digits, punctuation, symbols, emoji)."""
    codes = script_codes()
    joins = [codes.index(code) if code in codes else 0
             for code in ("Hani", "Jpan", "Hang", "Latn")]
    found = np.zeros(lines, np.uint8)
    kernel().line_scripts(text, lines, code_point_table(), found, *joins)
    return found


def line_script(line: str) -> Optional[str]:
    """The main script of one line (`script_ids`); None when it has no letter."""
    text = line.replace("\n", " ").encode("utf-8", "surrogatepass")
    return script_codes()[script_ids(text, 1)[0]] or None


def label_script(label: str) -> Optional[str]:
    """The script part of a label (`fra_Latn`: `Latn`); None for a label without one (`fr`)."""
    _, _, script = label.rpartition("_")
    return script if len(script) == 4 and script.istitle() else None


def allowed_labels(labels: Sequence[str]) -> np.ndarray:
    """Which labels a line of each main script may get (bool [script ids, labels]): those of
    its script (`LABEL_SCRIPTS`); for letters of an uncoded script, those of the scripts the
    kernel does not name; labels without a script, for every line with letters; none for a
    line without letters."""
    codes = script_codes()
    named = set(codes) | {code for allowed in LABEL_SCRIPTS.values() for code in allowed}
    scripts = [label_script(label) for label in labels]
    table = np.zeros((len(codes), len(labels)), bool)
    for index, code in enumerate(codes[1:], start=1):
        allowed = LABEL_SCRIPTS.get(code, (code,))
        table[index] = [script is None or script in allowed
                        or (code == OTHER and script not in named) for script in scripts]
    return table


@lru_cache(maxsize=1)
def no_space_ids() -> np.ndarray:
    """The script ids (`script_ids`) of the scripts written without spaces."""
    return np.array([index for index, code in enumerate(script_codes()) if code in NO_SPACES])


def line_lengths(text: bytes, tokens: np.ndarray, scripts: np.ndarray) -> np.ndarray:
    """Each line's length in words (int64), of `len(tokens)` lines of UTF-8 `text` (separated
    by '\\n'): its tokens; for a line whose main script (`scripts`, its ids) is written without
    spaces, its characters but spaces and controls, CHARACTERS_A_WORD a word (rounded up)."""
    lengths = tokens.astype(np.int64)
    spaceless = np.isin(scripts, no_space_ids())
    if spaceless.any():
        counted = characters(text, len(tokens))[spaceless]
        lengths[spaceless] = (counted + CHARACTERS_A_WORD - 1) // CHARACTERS_A_WORD
    return lengths


def characters(text: bytes, lines: int) -> np.ndarray:
    """The characters of each of `lines` lines of UTF-8 `text` (separated by '\\n'), not
    counting ASCII spaces and controls."""
    data = np.frombuffer(text + b"\n", np.uint8)  # the last line's start is a byte of it
    starts = np.zeros(lines, np.int64)
    starts[1:] = np.flatnonzero(data == ord("\n"))[:lines - 1] + 1
    counted = (data > ord(" ")) & ((data & 0xC0) != 0x80)  # not a UTF-8 continuation byte
    return np.add.reduceat(counted, starts, dtype=np.int64) if lines else starts
