"""The cleaning stage's steps for one sentence: normalise it, then test it against each filter in
turn (length in characters and in words, the share of its letters in the language's script, the
share of digits and punctuation, language ID), a sentence counted by the first filter that
removes it. Boilerplate (`laser.cleaning.boilerplate`) and duplicates (`--unify`) need every
file, and run after these."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Sequence

from ..errors import LaserError
from ..lid.scripts import char_script

# The filters in the order they apply; the summary counts what each removed.
FILTERS = ("chars", "words", "script", "digits_punctuation", "boilerplate", "language",
           "duplicates")
DESCRIPTIONS = {
    "chars": "length in characters", "words": "length in words",
    "script": "letters outside the language's script",
    "digits_punctuation": "digits, punctuation and symbols", "boilerplate": "boilerplate",
    "language": "language ID", "duplicates": "duplicates",
}
# Scripts a FLORES-200 script subtag stands for in `char_script`'s terms (Chinese characters are
# `Hani` whether simplified or traditional; Japanese and Korean text mixes them in).
SCRIPT_LETTERS = {"Hans": {"Hani"}, "Hant": {"Hani"}, "Jpan": {"Jpan", "Hani"},
                  "Hang": {"Hang", "Hani"}, "Kore": {"Hang", "Hani"}}
_SPACES = re.compile(r"\s+")
_CONTROL = dict.fromkeys([*range(0, 32), *range(127, 160)], " ")


@dataclass(frozen=True)
class CleaningOptions:
    """What the cleaning stage keeps of sentences in `lang`: `min_chars` to `max_chars`
    characters, `min_words` to `max_words` words (runs of non-space characters), at least
    `min_script_share` of their letters in the language's script, at most
    `max_digits_punctuation` of their characters digits, punctuation or symbols, paragraphs found
    in fewer than `boilerplate` documents of one site (0: no check), identified as `lang` with
    probability `min_lid_prob` or more (`lid`; by `lid_model`, None: the shipped model)."""

    lang: str
    min_chars: int = 10
    max_chars: int = 1000
    min_words: int = 1
    max_words: int = 250
    min_script_share: float = 0.5
    max_digits_punctuation: float = 0.5
    boilerplate: int = 3
    lid: bool = True
    min_lid_prob: float = 0.5
    lid_model: Optional[str] = None
    scripts: frozenset = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        for low, high, what in ((self.min_chars, self.max_chars, "chars"),
                                (self.min_words, self.max_words, "words")):
            if low > high:
                raise LaserError(f"--min-{what} {low} is more than --max-{what} {high}")
        for name in ("min_script_share", "max_digits_punctuation", "min_lid_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise LaserError(f"--{name.replace('_', '-')} must be between 0 and 1")
        if self.min_script_share > 0:
            object.__setattr__(self, "scripts", language_scripts(self.lang))

    def record(self) -> dict:
        """The options as the summary and the work directory record them."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__
                if name != "scripts"}


def language_scripts(lang: str) -> frozenset:
    """The scripts (`char_script` codes) of the letters of `lang`, from its FLORES-200 codes."""
    from ..text.flores import flores_codes
    codes = flores_codes(lang)
    if not codes:
        raise LaserError(f"--lang {lang}: no script known for this language; give a FLORES-200 "
                         "code (xxx_Scrp), or --min-script-share 0")
    subtags = {code.split("_")[1] for code in codes}
    return frozenset(script for subtag in subtags
                     for script in SCRIPT_LETTERS.get(subtag, {subtag}))


def normalize(text: str) -> str:
    """A sentence as the cleaning stage keeps it: Unicode NFC, control characters (tabs
    included) as spaces, runs of spaces as one, no space around it."""
    text = unicodedata.normalize("NFC", text).translate(_CONTROL)
    return _SPACES.sub(" ", text).strip()


def first_filter(text: str, options: CleaningOptions) -> Optional[str]:
    """The first of the sentence's own filters (length, script, digits and punctuation) that
    removes `text` (normalised), None when it passes them."""
    if not options.min_chars <= len(text) <= options.max_chars:
        return "chars"
    if not options.min_words <= text.count(" ") + 1 <= options.max_words:
        return "words"
    if options.min_script_share and script_share(text, options.scripts) < options.min_script_share:
        return "script"
    if digits_punctuation_share(text) > options.max_digits_punctuation:
        return "digits_punctuation"
    return None


def script_share(text: str, scripts: frozenset) -> float:
    """The share of the letters of `text` (of any known script) written in `scripts`; 0
    without letters."""
    letters = [script for script in map(char_script, text) if script]
    return sum(script in scripts for script in letters) / len(letters) if letters else 0.0


@lru_cache(maxsize=65536)
def _is_digit_punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] in "NPS"


def digits_punctuation_share(text: str) -> float:
    """The share of the non-space characters of `text` that are digits, punctuation or
    symbols."""
    visible = text.replace(" ", "")
    return sum(map(_is_digit_punctuation, visible)) / len(visible) if visible else 0.0


def language_kept(texts: Sequence[str], options: CleaningOptions) -> list[bool]:
    """Whether language ID finds each sentence in `options.lang` with probability
    `min_lid_prob` or more."""
    from ..lid.check import expected_languages
    from ..lid.model import identifier
    expected = expected_languages(options.lang)
    codes, probabilities = identifier(options.lid_model).ranked(texts)
    return [code[0].split("_")[0] in expected and probability[0] >= options.min_lid_prob
            for code, probability in zip(codes, probabilities)]
