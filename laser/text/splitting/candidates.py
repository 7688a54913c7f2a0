"""Where a sentence may end: after sentence-final punctuation (with the closing quotes and
brackets that follow it), and in the scripts that write no full stop, at every space."""
from __future__ import annotations

import re
from typing import NamedTuple

# Full stops, question and exclamation marks of the world's scripts: Latin/Greek/Cyrillic,
# the ellipsis, CJK (full and half width), Devanagari/Bengali dandas, Arabic and Urdu, Ethiopic,
# Myanmar, Khmer, Tibetan, Armenian (and the colon Armenian text often puts for its full stop),
# N'Ko, Canadian syllabics, Georgian, Sinhala, Vai.
TERMINALS = ".!?:…‼⁇⁈⁉。！？｡．।॥؟۔።፧፨။។៕།༎։߹᙮჻෴꘎\u037e"
CLOSERS = "\"'”’»›)]}」』）】〉》〕〗〙〛］｝"
# Full stops after which a sentence may start with no space between them.
UNSPACED = "。！？｡．।॥؟።፧፨။។៕།"

_TERMINAL = re.compile(rf"[{re.escape(TERMINALS)}]+[{re.escape(CLOSERS)}]*(\s*)")
_UNSPACED = frozenset(UNSPACED)
_SPACE = re.compile(r"\s+")
_LINE_BREAK = re.compile(r"\s*\n\s*")


class Candidate(NamedTuple):
    """A place where a sentence may end: the sentence would end at `end`, the next begin at
    `start` (after the whitespace between them); `punctuated` unless it is a bare space."""

    end: int
    start: int
    punctuated: bool


def punctuated_candidates(text: str) -> list[Candidate]:
    """The candidates after sentence-final punctuation followed by a space, or by anything after
    the full stops of the scripts that need no space (not at the end of the text)."""
    found = []
    for match in _TERMINAL.finditer(text):
        end, start = match.start(1), match.end()
        if start < len(text) and (start > end or not _UNSPACED.isdisjoint(match.group())):
            found.append(Candidate(end, start, True))
    return found


def space_candidates(text: str) -> list[Candidate]:
    """Every run of whitespace inside the text, for the scripts without full stops."""
    return [Candidate(match.start(), match.end(), False) for match in _SPACE.finditer(text)
            if 0 < match.start() and match.end() < len(text)]


def candidates(text: str, spaces: bool) -> list[Candidate]:
    """The candidates of a stripped text in order: punctuated ones, and with `spaces` the other
    runs of whitespace too."""
    found = punctuated_candidates(text)
    if not spaces:
        return found
    taken = {candidate.start for candidate in found}
    merged = found + [candidate for candidate in space_candidates(text)
                      if candidate.start not in taken]
    return sorted(merged)


def lines_of(text: str) -> list[str]:
    """The non-blank lines of a text, stripped: a line break always ends a sentence (a
    document's lines are its paragraphs)."""
    return [line for line in (part.strip() for part in _LINE_BREAK.split(text)) if line]
