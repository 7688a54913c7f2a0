"""Sentence alignment of two documents that translate each other: `align_sentences` embeds
their runs of consecutive sentences and `align_embeddings` finds the cheapest monotone beads."""
from __future__ import annotations

from typing import Sequence

from ..errors import LaserError
from .beads import AlignOptions, Bead
from .dp import best_path
from .overlaps import Embed, Overlaps, embed_overlaps


def align_embeddings(src: Overlaps, trg: Overlaps,
                     options: AlignOptions = AlignOptions()) -> list[Bead]:
    """The beads of two documents given their Overlaps, in order, covering every sentence of
    both once."""
    if len(src) and len(trg) and src.vectors.shape[2] != trg.vectors.shape[2]:
        raise LaserError(f"the two documents' embeddings differ in dimension "
                         f"({src.vectors.shape[2]} and {trg.vectors.shape[2]}): "
                         "they come from two models")
    moves, spent, costs = best_path(src, trg, options, options.bead_sizes())
    beads: list[Bead] = []
    i = j = 0
    for (a, b), cost in zip(moves, spent):
        sides = tuple(range(i, i + a)), tuple(range(j, j + b))
        beads.append(Bead(*sides, score=costs.cosine(*sides), cost=cost))
        i, j = i + a, j + b
    return beads


def align_sentences(src: Sequence[str], trg: Sequence[str], embed_src: Embed, embed_trg: Embed,
                    options: AlignOptions = AlignOptions()) -> list[Bead]:
    """The beads of two documents given as sentences, every run of up to
    `options.longest_side` consecutive sentences embedded once by its side's `embed`."""
    longest = options.longest_side
    return align_embeddings(embed_overlaps(src, embed_src, longest),
                            embed_overlaps(trg, embed_trg, longest), options)
