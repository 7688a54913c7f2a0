"""Both sides of a bitext command as search vectors: one row per distinct sentence of each file."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

from ..models.spaces import check_same_space, embeddings_origin
from ..search.inputs import EmbeddingSource, EncoderLoader, sentence_embeddings
from ..search.vectors import Vectors
from .corpus import Corpus, corpus_vectors


@contextmanager
def bitext_vectors(src: Corpus, trg: Corpus, src_source: EmbeddingSource,
                   trg_source: EmbeddingSource, encoders: tuple[EncoderLoader, EncoderLoader],
                   workdir: Optional[str] = None) -> Iterator[tuple[Vectors, Vectors]]:
    """The rows of both sides, precomputed or embedded now, checked against the line counts;
    each side's text is embedded with its own model of `encoders`, chosen by `choose_models`,
    which refused sides of two embedding spaces before any work."""
    with sentence_embeddings(src_source, encoders[0], workdir) as (x_matrix, x_name), \
            sentence_embeddings(trg_source, encoders[1], workdir) as (y_matrix, y_name):
        vectors = corpus_vectors(src, x_matrix, x_name), corpus_vectors(trg, y_matrix, y_name)
        warn_unchecked((src_source, trg_source), encoders)  # once the inputs are found sound
        yield vectors


def warn_unchecked(sides: tuple[EmbeddingSource, EmbeddingSource],
                   encoders: tuple[EncoderLoader, EncoderLoader]) -> None:
    """Say (`check_same_space` warns) when an embeddings file of a side records no model, so
    that nothing could check that both sides share a space."""
    if not all(embeddings_origin(side.embeddings).known for side in sides if side.embeddings):
        check_same_space(*(side.origin(encoder) for side, encoder in zip(sides, encoders)))
