"""Paragraphs built from sentences, with their true boundaries: how the splitter is trained
(from the corpus's train split) and measured (bench/split.py, on held-out sentences)."""
from __future__ import annotations

import random
from typing import Iterator, NamedTuple, Sequence

# Languages written without a space between sentences (their model keys).
UNSPACED_LANGUAGES = frozenset({"zh", "ja"})
SIZES = (2, 6)  # sentences per paragraph, at least and at most


class Paragraph(NamedTuple):
    """A text and the (end, start) offsets of its true sentence boundaries."""

    text: str
    boundaries: frozenset[tuple[int, int]]


def unquoted(sentence: str) -> str:
    """A sentence without the CSV quoting some sources left around it, once or twice (a field in
    quotes whose own quotes are all doubled)."""
    for _ in range(2):
        inner = sentence[1:-1]
        if not (len(sentence) > 1 and sentence[0] == sentence[-1] == '"'
                and '"' not in inner.replace('""', "")):
            break
        sentence = inner.replace('""', '"')
    return sentence


def joined(sentences: Sequence[str], joiner: str) -> Paragraph:
    """The sentences (stripped) joined into one paragraph."""
    text, boundaries = "", set()
    for sentence in sentences:
        if text:
            boundaries.add((len(text), len(text) + len(joiner)))
            text += joiner
        text += sentence.strip()
    return Paragraph(text, frozenset(boundaries))


def paragraphs(sentences: Sequence[str], lang: str, seed: int) -> Iterator[Paragraph]:
    """The sentences in their order, 2 to 6 at a time (chosen at random, from `seed`), joined
    with a space, or with nothing in the languages that put none between sentences."""
    draw = random.Random(seed)
    joiner = "" if lang in UNSPACED_LANGUAGES else " "
    position = 0
    while position < len(sentences):
        size = draw.randint(*SIZES)
        yield joined(sentences[position:position + size], joiner)
        position += size
