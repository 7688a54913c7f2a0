"""Splitting a text into its sentences, each a substring of it."""
from __future__ import annotations

from .candidates import Candidate, lines_of
from .model import model_language, shipped_model


def split_sentences(text: str, lang: str) -> list[str]:
    """The sentences of one paragraph or document in order, each a substring of `text` (kept
    exactly but for the whitespace between sentences); [] for a blank text. A line break always
    ends a sentence. `lang` is any code `laser.text.languages.resolve` accepts."""
    model, key = shipped_model(), model_language(lang)
    return [sentence for line in lines_of(text)
            for sentence in _cut(line, model.boundaries(line, key))]


def _cut(line: str, boundaries: list[Candidate]) -> list[str]:
    """The sentences of a stripped line cut at `boundaries`."""
    pieces, position = [], 0
    for boundary in boundaries:
        pieces.append(line[position:boundary.end])
        position = boundary.start
    pieces.append(line[position:])
    return pieces
