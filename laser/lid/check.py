"""Whether lines are in the languages they should be: the language filter of mined or scored
pairs (`laser mine --lid-filter`, `laser filter score --lid-filter`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..errors import LaserError
from ..text.flores import flores_codes
from .model import identifier


def expected_languages(lang: str) -> frozenset[str]:
    """The ISO 639-3 codes a line of `lang` (a FLORES-200, ISO 639 code or English name) may be
    identified as, whatever its script."""
    codes = flores_codes(lang)
    if codes:
        return frozenset(code.split("_")[0] for code in codes)
    base = lang.strip().lower().replace("-", "_").split("_")[0]
    if len(base) == 3 and base.isalpha():
        return frozenset([base])
    raise LaserError(f"{lang}: not a language the language filter knows; give an ISO 639-3 "
                     "or FLORES-200 code")


@dataclass(frozen=True)
class LanguagePair:
    """The languages the two sides of each pair must be identified as."""

    src: frozenset[str]
    trg: frozenset[str]
    model: Optional[str] = None  # a fastText language-ID file; None: the shipped model
    min_prob: float = 0.0  # a side identified less surely is not identified (`und`)

    @classmethod
    def of(cls, src_lang: Optional[str], trg_lang: Optional[str], model: Optional[str] = None,
           min_prob: float = 0.0) -> "LanguagePair":
        """From the sides' --src-lang and --trg-lang, which the filter needs."""
        if not src_lang or not trg_lang:
            raise LaserError("--lid-filter needs --src-lang and --trg-lang: the languages each "
                             "side must be in")
        return cls(expected_languages(src_lang), expected_languages(trg_lang), model, min_prob)

    def matches(self, src_texts: Sequence[str], trg_texts: Sequence[str]) -> list[bool]:
        """Whether each pair's sides are identified as their expected languages (a side
        without letters is `und`: never)."""
        found = identifier(self.model)
        src_codes, _ = found.ranked(src_texts, 1, self.min_prob)
        trg_codes, _ = found.ranked(trg_texts, 1, self.min_prob)
        return [src[0].split("_")[0] in self.src and trg[0].split("_")[0] in self.trg
                for src, trg in zip(src_codes, trg_codes)]
