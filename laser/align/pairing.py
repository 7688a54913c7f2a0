"""Pairing documents across languages, after Thompson & Koehn (EMNLP 2020, "Exploiting Sentence
Order in Document Alignment"): each document gets a vector that keeps the order of its
sentences, the nearest documents of the other collection by those vectors are its candidates,
each candidate pair is re-scored by aligning its sentences, and pairs are taken one-to-one,
best first, down to a threshold.

The document vector is the concatenation of `chunks` vectors, one per stretch of the document:
every sentence adds its unit embedding to the stretches around its relative position, weighted
by a Gaussian of the distance (in stretches) and by how rare the sentence is in its collection
(a line every page repeats, boilerplate, weighs little). Two documents' vectors are close when
the same meaning comes at the same places, so a document is not confused with another on the
same subject written in another order. The re-score of a candidate pair is the share of both
documents' sentences that its alignment puts in beads of `good_bead` cosine or more: a
translation covers nearly all of both, two documents that merely share a subject little."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from ..errors import LaserError
from ..search.exact import exact_knn
from ..search.vectors import Vectors, unit_rows
from .collection import Document

Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class PairingOptions:
    """How documents are paired: `chunks` stretches per document vector, `candidates` nearest
    documents of each document (both ways) re-scored by alignment, pairs kept from `threshold`
    re-score up, a bead counting as translated from `good_bead` cosine up."""

    chunks: int = 8
    candidates: int = 4
    threshold: float = 0.3
    good_bead: float = 0.5

    def __post_init__(self) -> None:
        if self.chunks < 1 or self.candidates < 1:
            raise LaserError("document pairing needs at least 1 chunk and 1 candidate")
        if not 0.0 <= self.threshold <= 1.0:
            raise LaserError(f"--pair-threshold {self.threshold}: give a share from 0 to 1")


def pairing_options(threshold: Optional[float] = None) -> PairingOptions:
    """The default options, with `threshold` when given."""
    return PairingOptions() if threshold is None else PairingOptions(threshold=threshold)


@dataclass(frozen=True)
class DocumentMatch:
    """Documents `src` and `trg` (indices in their collections) paired with `score` (the
    re-score, 0-1), with the beads of their alignment."""

    src: int
    trg: int
    score: float
    beads: list


class CachedEmbedder:
    """An embedding function that embeds each distinct text once: the pairing embeds every
    sentence for the document vectors, and the aligner asks for them again (and for their
    concatenations) once per candidate pair."""

    def __init__(self, embed: Embed):
        self.embed, self.rows = embed, {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(text for text in texts if text not in self.rows))
        if missing:
            self.rows.update(zip(missing, self.embed(missing)))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.rows[text] for text in texts]).astype(np.float32, copy=False)


def normalized(sentence: str) -> str:
    """What makes two lines the same line for the rarity weights: case and spacing aside."""
    return " ".join(sentence.lower().split())


def rarity_weights(documents: Sequence[Document]) -> Callable[[str], float]:
    """Each sentence's weight: log(1 + N / df), df the number of the collection's N documents
    holding the same (normalized) line."""
    frequency: Counter = Counter()
    for document in documents:
        frequency.update({normalized(sentence) for sentence in document.sentences})
    total = len(documents)
    return lambda sentence: math.log1p(total / frequency[normalized(sentence)])


def position_weights(count: int, chunks: int) -> np.ndarray:
    """(count, chunks): how much sentence i of `count` adds to each stretch, summing to 1."""
    positions = (np.arange(count) + 0.5) / max(count, 1) * chunks
    centres = np.arange(chunks) + 0.5
    weights = np.exp(-0.5 * (positions[:, None] - centres[None, :]) ** 2)
    return weights / weights.sum(axis=1, keepdims=True)


def document_vector(rows: np.ndarray, weights: np.ndarray, chunks: int) -> np.ndarray:
    """The order-keeping vector of a document from its sentences' rows and rarity weights."""
    if not len(rows):
        return np.zeros(chunks * rows.shape[1], dtype=np.float32)
    mixed = (position_weights(len(rows), chunks) * weights[:, None]).T @ unit_rows(rows)
    return (unit_rows(mixed.astype(np.float32)) / math.sqrt(chunks)).reshape(-1)


def document_vectors(documents: Sequence[Document], embed: Embed, chunks: int) -> np.ndarray:
    """The vectors of a collection's documents, one row each."""
    weight = rarity_weights(documents)
    vectors = []
    for document in documents:
        rows = embed(document.sentences) if document.sentences else np.zeros((0, 1))
        weights = np.array([weight(sentence) for sentence in document.sentences])
        vectors.append(document_vector(rows, weights, chunks))
    width = max((len(vector) for vector in vectors), default=0)
    return np.stack([vector if len(vector) == width else np.zeros(width, np.float32)
                     for vector in vectors])


def candidate_pairs(src_vectors: np.ndarray, trg_vectors: np.ndarray,
                    k: int) -> list[tuple[int, int]]:
    """The k nearest target documents of each source document and the k nearest source
    documents of each target document, in (src, trg) order."""
    forward, backward = exact_knn(Vectors(src_vectors, "source documents"),
                                  Vectors(trg_vectors, "target documents"), k)
    pairs = {(i, int(j)) for i, row in enumerate(forward.ids) for j in row if j >= 0}
    pairs |= {(int(i), j) for j, row in enumerate(backward.ids) for i in row if i >= 0}
    return sorted(pairs)


def coverage(beads: Iterable, src_rows: np.ndarray, trg_rows: np.ndarray,
             good: float) -> float:
    """The share of both documents' sentences in beads whose two sides (their sentences' rows
    summed) have a cosine of `good` or more."""
    covered = total = 0
    for bead in beads:
        total += len(bead.src) + len(bead.trg)
        if bead.src and bead.trg:
            left = src_rows[list(bead.src)].sum(axis=0)
            right = trg_rows[list(bead.trg)].sum(axis=0)
            cosine = float(left @ right / (np.linalg.norm(left) * np.linalg.norm(right) + 1e-9))
            if cosine >= good:
                covered += len(bead.src) + len(bead.trg)
    return covered / total if total else 0.0


def one_to_one(matches: Iterable[DocumentMatch], threshold: float) -> list[DocumentMatch]:
    """Competitive linking: the best-scoring pairs first, each document in one pair at most,
    none under `threshold`; in source order."""
    taken_src, taken_trg, kept = set(), set(), []
    for match in sorted(matches, key=lambda match: (-match.score, match.src, match.trg)):
        if match.score < threshold or match.src in taken_src or match.trg in taken_trg:
            continue
        taken_src.add(match.src)
        taken_trg.add(match.trg)
        kept.append(match)
    return sorted(kept, key=lambda match: match.src)


def pair_documents(src_documents: Sequence[Document], trg_documents: Sequence[Document],
                   embed_src: Embed, embed_trg: Embed, align_options,
                   options: PairingOptions = PairingOptions(),
                   progress: bool = False) -> list[DocumentMatch]:
    """Which source document is the translation of which target document, one-to-one, with the
    beads of each pair's alignment (`align_options`, as `laser align` aligns one pair)."""
    from . import align_sentences
    from ..progress import progress_bar
    if not src_documents or not trg_documents:
        return []
    embed_src, embed_trg = CachedEmbedder(embed_src), CachedEmbedder(embed_trg)
    src_vectors = document_vectors(src_documents, embed_src, options.chunks)
    trg_vectors = document_vectors(trg_documents, embed_trg, options.chunks)
    candidates = candidate_pairs(src_vectors, trg_vectors, options.candidates)
    matches = []
    with progress_bar(progress, total=len(candidates), unit="pair",
                      desc="re-scoring candidates") as bar:
        for i, j in candidates:
            src, trg = src_documents[i].sentences, trg_documents[j].sentences
            beads = align_sentences(src, trg, embed_src, embed_trg, align_options)
            score = coverage(beads, embed_src(src), embed_trg(trg), options.good_bead)
            matches.append(DocumentMatch(i, j, score, beads))
            bar.update()
    return one_to_one(matches, options.threshold)
