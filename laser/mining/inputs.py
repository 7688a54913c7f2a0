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
                   trg_source: EmbeddingSource, encoder: EncoderLoader,
                   workdir: Optional[str] = None) -> Iterator[tuple[Vectors, Vectors]]:
    """The rows of both sides, precomputed or embedded now, checked against the line counts;
    sides of two embedding spaces are refused before any work (`check_same_space`)."""
    origins = src_source.origin(encoder), trg_source.origin(encoder)
    known = all(origin.known for origin in origins)
    if known:
        check_same_space(*origins)  # before any text is embedded
    with sentence_embeddings(src_source, encoder, workdir) as (x_matrix, x_name), \
            sentence_embeddings(trg_source, encoder, workdir) as (y_matrix, y_name):
        vectors = corpus_vectors(src, x_matrix, x_name), corpus_vectors(trg, y_matrix, y_name)
        if not known:
            check_same_space(*origins)  # the warning, once the inputs are found sound
        yield vectors
