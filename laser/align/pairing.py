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
translation covers nearly all of both, two documents that merely share a subject little.

Memory is bounded by the collections' vectors, not their text: the documents are streamed once
into a spool on disk (`laser.align.spool`), the line counts of the rarity weights kept as 64-bit
hashes; the vectors are computed a batch of documents at a time; candidates are re-scored one
at a time, keeping only their scores in memory and their beads in another spool, with the
embeddings of the documents aligned last held in a cache of `cache_mb` MiB (a document pushed
out is embedded again when a later candidate comes back to it); and the pairs found are read
back from the spools one at a time as they are written."""
from __future__ import annotations

import math
import os
import tempfile
from array import array
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..search.exact import exact_knn
from ..search.vectors import Vectors, unit_rows
from .aligner import align_embeddings
from .beads import AlignOptions, Bead
from .collection import Document
from .overlaps import Overlaps, embed_overlaps
from .spool import Spool, SpooledCollection

Embed = Callable[[list[str]], np.ndarray]
# Sentences embedded at once for the document vectors (documents are batched up to it).
VECTOR_BATCH = 2048


@dataclass(frozen=True)
class PairingOptions:
    """How documents are paired: `chunks` stretches per document vector, `candidates` nearest
    documents of each document (both ways) re-scored by alignment, pairs kept from `threshold`
    re-score up, a bead counting as translated from `good_bead` cosine up, and at most
    `cache_mb` MiB of documents' embeddings kept for the candidates that come back to them."""

    chunks: int = 8
    candidates: int = 4
    threshold: float = 0.3
    good_bead: float = 0.5
    cache_mb: float = 1024

    def __post_init__(self) -> None:
        if self.chunks < 1 or self.candidates < 1:
            raise LaserError("document pairing needs at least 1 chunk and 1 candidate")
        if not 0.0 <= self.threshold <= 1.0:
            raise LaserError(f"--pair-threshold {self.threshold}: give a share from 0 to 1")
        if self.cache_mb < 0:
            raise LaserError(f"--pair-cache-mb {self.cache_mb}: give 0 MiB or more")


@dataclass(frozen=True)
class DocumentMatch:
    """Documents `src` and `trg` (numbers in their collections) paired with `score` (the
    re-score, 0-1)."""

    src: int
    trg: int
    score: float


@dataclass(frozen=True)
class AlignedPair:
    """A pair found, with its documents' names and sentences and the beads aligning them."""

    match: DocumentMatch
    names: tuple[str, str]
    sentences: tuple[list[str], list[str]]
    beads: list[Bead]


class CachedEmbedder:
    """An embedding function that embeds each distinct text once: a document's sentences are
    asked for again (for the re-score) after the aligner embedded them with their runs."""

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


def line_key(sentence: str) -> int:
    """A line's 64-bit hash (of its normalized text), as the rarity weights count it."""
    return hash(normalized(sentence))


class LineRarity:
    """Each line's weight in a collection, log(1 + N / df), df the number of the N documents
    holding the same (normalized) line; counted as hashes, 8 bytes per distinct line of a
    document."""

    def __init__(self):
        self.keys, self.documents = array("q"), 0
        self.counted: Optional[tuple[np.ndarray, np.ndarray]] = None

    def add(self, sentences: Iterable[str]) -> None:
        """Count one more document's lines."""
        self.keys.extend({line_key(sentence) for sentence in sentences})
        self.documents += 1
        self.counted = None

    def weights(self, sentences: list[str]) -> np.ndarray:
        """The weights of lines of the collection's documents."""
        if self.counted is None:
            self.counted = np.unique(np.frombuffer(self.keys, dtype=np.int64),
                                     return_counts=True)
        keys, counts = self.counted
        found = np.searchsorted(keys, np.array([line_key(s) for s in sentences], np.int64))
        return np.log1p(self.documents / counts[found])


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


@dataclass
class Side:
    """One collection as it is paired: its documents spooled, their line rarity, and its
    embedding function."""

    documents: SpooledCollection
    rarity: LineRarity
    embed: Embed

    @classmethod
    def read(cls, documents: Iterable[Document], spool: SpooledCollection, embed: Embed,
             progress: bool = False, desc: str = "reading documents") -> Side:
        """`documents` spooled, their lines counted."""
        from ..progress import progress_bar
        side = cls(spool, LineRarity(), embed)
        with progress_bar(progress, unit="document", desc=desc) as bar:
            for document in documents:
                side.documents.add(document)
                side.rarity.add(document.sentences)
                bar.update()
        return side


def embedded_batches(side: Side) -> Iterator[list[tuple[list[str], np.ndarray]]]:
    """The documents' sentences with their rows, a batch of documents (up to VECTOR_BATCH
    sentences, or one longer document) at a time, each distinct sentence of a batch embedded
    once."""
    batch: list[list[str]] = []
    size = 0
    for sentences in side.documents:
        batch.append(sentences)
        size += len(sentences)
        if size >= VECTOR_BATCH:
            yield _embedded(batch, side.embed)
            batch, size = [], 0
    if batch:
        yield _embedded(batch, side.embed)


def _embedded(batch: list[list[str]], embed: Embed) -> list[tuple[list[str], np.ndarray]]:
    cached = CachedEmbedder(embed)
    cached([sentence for sentences in batch for sentence in sentences])
    return [(sentences, cached(sentences) if sentences else np.zeros((0, 0), np.float32))
            for sentences in batch]


def document_vectors(side: Side, chunks: int, progress: bool = False) -> np.ndarray:
    """The vectors of a side's documents, one row each ((N, 0) when every document is
    empty), computed document after document."""
    from ..progress import progress_bar
    vectors: Optional[np.ndarray] = None
    number = 0
    with progress_bar(progress, total=len(side.documents), unit="document",
                      desc="document vectors") as bar:
        for batch in embedded_batches(side):
            for sentences, rows in batch:
                if len(rows):
                    if vectors is None:
                        vectors = np.zeros((len(side.documents), chunks * rows.shape[1]),
                                           np.float32)
                    vectors[number] = document_vector(rows, side.rarity.weights(sentences),
                                                      chunks)
                number += 1
            bar.update(len(batch))
    return vectors if vectors is not None else np.zeros((len(side.documents), 0), np.float32)


def candidate_pairs(src_vectors: np.ndarray, trg_vectors: np.ndarray,
                    k: int) -> list[tuple[int, int]]:
    """The k nearest target documents of each source document and the k nearest source
    documents of each target document, in (src, trg) order."""
    if not src_vectors.shape[1] or not trg_vectors.shape[1]:
        return []
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


@dataclass(frozen=True)
class Embedded:
    """What aligning a document reads: the Overlaps of its runs of sentences and its sentences'
    rows (as embedded, for the re-score)."""

    overlaps: Overlaps
    rows: np.ndarray

    @property
    def size(self) -> int:
        return self.overlaps.vectors.nbytes + self.rows.nbytes


class EmbeddingCache:
    """The Embedded of documents, the least recently used left out beyond `budget` bytes (the
    last one asked for is always kept)."""

    def __init__(self, budget: float, longest: int):
        self.budget, self.longest = budget, longest
        self.held: OrderedDict = OrderedDict()
        self.size = 0

    def get(self, side: Side, number: int) -> Embedded:
        key = (id(side), number)
        if key in self.held:
            self.held.move_to_end(key)
            return self.held[key]
        cached = CachedEmbedder(side.embed)
        sentences = side.documents.sentences(number)
        overlaps = embed_overlaps(sentences, cached, self.longest)
        embedded = self.held[key] = Embedded(overlaps, cached(sentences))
        self.size += embedded.size
        while self.size > self.budget and len(self.held) > 1:
            self.size -= self.held.popitem(last=False)[1].size
        return embedded


def rescored(candidates: list[tuple[int, int]], src: Side, trg: Side, cache: EmbeddingCache,
             beads: Spool, align_options: AlignOptions, good_bead: float,
             progress: bool = False) -> list[DocumentMatch]:
    """Each candidate pair's re-score, one pair at a time (in source order, so that a source
    document's embeddings serve all its candidates), its beads added to `beads`."""
    from ..progress import progress_bar
    matches = []
    with progress_bar(progress, total=len(candidates), unit="pair",
                      desc="re-scoring candidates") as bar:
        for i, j in candidates:
            left, right = cache.get(src, i), cache.get(trg, j)
            found = align_embeddings(left.overlaps, right.overlaps, align_options)
            beads.add(found)
            matches.append(DocumentMatch(i, j, coverage(found, left.rows, right.rows,
                                                        good_bead)))
            bar.update()
    return matches


def pair_keys(pairs: Iterable[tuple[int, int]], trg_count: int) -> np.ndarray:
    """One number for each (source, target) pair, in the order of the pairs."""
    return np.array([i * trg_count + j for i, j in pairs], dtype=np.int64)


@dataclass
class Pairing:
    """The pairs found between two collections (`matches`, in source order), and the beads of
    every candidate pair (`beads`, in the order of their `candidates` keys)."""

    src: SpooledCollection
    trg: SpooledCollection
    matches: list[DocumentMatch]
    candidates: np.ndarray
    beads: Spool

    def names(self, match: DocumentMatch) -> tuple[str, str]:
        """The names of a pair's two documents."""
        return self.src.names[match.src], self.trg.names[match.trg]

    def aligned_pairs(self) -> Iterator[AlignedPair]:
        """The pairs found with their sentences and beads, read back one at a time."""
        keys = pair_keys(((match.src, match.trg) for match in self.matches), len(self.trg))
        for match, number in zip(self.matches, np.searchsorted(self.candidates, keys)):
            yield AlignedPair(match, self.names(match), (self.src.sentences(match.src),
                                                         self.trg.sentences(match.trg)),
                              self.beads[int(number)])


@contextmanager
def pair_documents(src_documents: Iterable[Document], trg_documents: Iterable[Document],
                   embed_src: Embed, embed_trg: Embed, align_options: AlignOptions,
                   options: PairingOptions = PairingOptions(), progress: bool = False,
                   workdir: Optional[str] = None) -> Iterator[Pairing]:
    """Which source document is the translation of which target document, one-to-one
    (`align_options`: as `laser align` aligns one pair); the documents and the candidates'
    beads are spooled in a temporary folder (in `workdir`), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=".laser-pairing-", dir=workdir) as folder, \
            SpooledCollection(os.path.join(folder, "src")) as src_spool, \
            SpooledCollection(os.path.join(folder, "trg")) as trg_spool, \
            Spool(os.path.join(folder, "beads")) as beads:
        src = Side.read(src_documents, src_spool, embed_src, progress, "reading SRC")
        trg = Side.read(trg_documents, trg_spool, embed_trg, progress, "reading TRG")
        candidates = candidate_pairs(document_vectors(src, options.chunks, progress),
                                     document_vectors(trg, options.chunks, progress),
                                     options.candidates)
        matches = rescored(candidates, src, trg,
                           EmbeddingCache(options.cache_mb * 2 ** 20, align_options.longest_side),
                           beads, align_options, options.good_bead, progress)
        yield Pairing(src_spool, trg_spool, one_to_one(matches, options.threshold),
                      pair_keys(candidates, len(trg_spool)), beads)
