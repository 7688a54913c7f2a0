"""The text that decides whether two lines are duplicates when mining unifies normalised text:
CCNet's `normalize_for_dedup`, which Meta's stopes pipeline also dedups with."""
from __future__ import annotations

import re

# CCNet's list: typographic and full-width punctuation, then the C0 and C1 control characters
# (tab included). ASCII punctuation is kept.
REMOVED = ("，。、„”“«»１」「《》´∶："
           "？！（）；–—．～’…━〈〉【】％►"
           + "".join(map(chr, [*range(0, 32), *range(127, 160)])))
_DELETE = str.maketrans("", "", REMOVED)
_DIGIT = re.compile(r"\d")


def normalize_for_dedup(text: str) -> str:
    """`text` without surrounding whitespace, lower-cased, every digit (of any script) as 0,
    without the characters of REMOVED."""
    return _DIGIT.sub("0", text.strip().lower()).translate(_DELETE)
