"""Document (paragraph) embeddings: each line is split into sentences, the sentences are embedded,
and their rows are pooled (mean, or max) into one row per line, as the official SplitLines and
JoinEmbed tools do.

Sentences are split by laser's own splitter (`laser.text.sentences`, `laser split`: every
language, docs/sentence-splitting.md).

With lang `auto` each document's language is identified (a paragraph is a surer guess than
its sentences): it chooses the document's sentence splitter, and its sentences are preprocessed
as it (and embedded by its official LASER3 encoder where `Encoder.route` finds one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..errors import LaserError
from ..text.languages import AUTO
from ..text.sentences import split_sentences

if TYPE_CHECKING:
    from ..encoder import Encoder
    from ..pipeline import EmbeddedChunk

POOLINGS = ("mean", "max")


def split_document(text: str, lang: str) -> list[str]:
    """The sentences of one document (`laser.text.sentences.split_sentences`); an empty (or
    blank) document is one empty sentence, so that it still gets a row: the embedding of the
    empty string."""
    return split_sentences(text, lang) or [""]


def pool(rows: np.ndarray, counts: Sequence[int], pooling: str = "mean") -> np.ndarray:
    """Pool consecutive runs of rows (`counts[i]` rows for document i, each at least 1)."""
    if pooling not in POOLINGS:
        raise LaserError(f"unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}")
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    if pooling == "max":
        return np.maximum.reduceat(rows, starts, axis=0)
    sums = np.add.reduceat(rows.astype(np.float64), starts, axis=0)
    return (sums / counts[:, None]).astype(np.float32)


@dataclass
class DocumentEncoder:
    """A chunk encoder for `laser.pipeline.embed_file` that reads each line as a document; it
    counts the sentences it embedded."""

    pooling: str = "mean"
    sentences: int = field(default=0, compare=False)

    def __post_init__(self):
        if self.pooling not in POOLINGS:
            raise LaserError(f"unknown pooling {self.pooling!r}; choose one of "
                             f"{', '.join(POOLINGS)}")

    @property
    def rows(self) -> str:
        """What a row is, for the provenance sidecar."""
        return f"documents: {self.pooling} of the rows of their sentences"

    def __call__(self, encoder: Encoder, documents: list[str], lang: str) -> EmbeddedChunk:
        """The documents' rows, and with lang `auto` their identified languages."""
        guesses, languages = encoder.identify(documents) if lang == AUTO \
            else (None, [lang] * len(documents))
        parts = [split_document(document, code) for document, code in zip(documents, languages)]
        sentences = [sentence for part in parts for sentence in part]
        self.sentences += len(sentences)
        by_sentence = [code for part, code in zip(parts, languages) for _ in part]
        rows = encoder.encode(sentences, by_sentence if guesses is not None else lang)
        return pool(rows, [len(part) for part in parts], self.pooling), guesses


def embed_documents(encoder: Encoder, documents: Sequence[str], lang: str,
                    pooling: str = "mean") -> np.ndarray:
    """One row per document (paragraph): the `pooling` of the rows of its sentences."""
    if isinstance(documents, str):
        return embed_documents(encoder, [documents], lang, pooling)[0]
    return DocumentEncoder(pooling)(encoder, list(documents), lang)[0]
