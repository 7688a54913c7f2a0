"""Both sides of a bitext command as search vectors: one row per distinct sentence of each file."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

from ..models.spaces import check_same_space
from ..search.inputs import EmbeddingSource, EncoderLoader, sentence_embeddings
from ..search.vectors import Vectors
from .corpus import Corpus, corpus_vectors


@contextmanager
def bitext_vectors(src: Corpus, trg: Corpus, src_source: EmbeddingSource,
                   trg_source: EmbeddingSource, encoders: tuple[EncoderLoader, EncoderLoader],
                   workdir: Optional[str] = None) -> Iterator[tuple[Vectors, Vectors]]:
    """The rows of both sides, precomputed or embedded now, checked against the line counts;
    each side's text is embedded with its own model of `encoders`; sides of two embedding
    spaces are refused before any work (`check_same_space`)."""
    origins = src_source.origin(encoders[0]), trg_source.origin(encoders[1])
    known = all(origin.known for origin in origins)
    if known:
        check_same_space(*origins)  # before any text is embedded
    with sentence_embeddings(src_source, encoders[0], workdir) as (x_matrix, x_name), \
            sentence_embeddings(trg_source, encoders[1], workdir) as (y_matrix, y_name):
        vectors = corpus_vectors(src, x_matrix, x_name), corpus_vectors(trg, y_matrix, y_name)
        if not known:
            check_same_space(*origins)  # the warning, once the inputs are found sound
        yield vectors
