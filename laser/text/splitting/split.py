"""Splitting a text into its sentences, each a substring of it."""
from __future__ import annotations

from .candidates import Candidate, candidates, lines_of


def split_sentences(text: str, lang: str) -> list[str]:
    """The sentences of one paragraph or document in order, each a substring of `text` (kept
    exactly but for the whitespace between sentences); [] for a blank text. A line break always
    ends a sentence. `lang` is any code `laser.text.languages.resolve` accepts."""
    sentences = []
    for line in lines_of(text):
        found = [candidate for candidate in candidates(line, spaces=False) if _ends(line, candidate)]
        sentences += _cut(line, found)
    return sentences


def _ends(line: str, candidate: Candidate) -> bool:
    following = line[candidate.start]
    return not following.islower()


def _cut(line: str, boundaries: list[Candidate]) -> list[str]:
    """The sentences of a stripped line cut at `boundaries`."""
    pieces, position = [], 0
    for boundary in boundaries:
        pieces.append(line[position:boundary.end])
        position = boundary.start
    pieces.append(line[position:])
    return pieces
