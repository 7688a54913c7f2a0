"""Paraphrases: for each query sentence, the nearest sentences of a large monolingual index (one
built by `laser knn build TEXT --lang L`, which records its sentences), leaving out exact copies
of the query or of a better candidate, and near-copies of the query, whose lexical overlap (the
Jaccard index of their sets of lower-cased words) is above a cap."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional

import numpy as np

from ..errors import LaserError
from ..io.text import line_texts
from ..search.index import IndexMeta, search
from ..search.vectors import Neighbours, Vectors

if TYPE_CHECKING:
    import faiss

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ParaphraseOptions:
    """Paraphrases kept per query, the lexical-overlap cap of near-copies, the lowest score kept,
    how many times k candidates the index is asked for (filtering drops some), and IVF nprobe."""

    k: int = 4
    max_overlap: float = 0.8
    min_score: Optional[float] = None
    candidates: int = 4
    nprobe: Optional[int] = None


def words(text: str) -> set[str]:
    """The set of lower-cased words of a sentence."""
    return set(_WORD.findall(text.casefold()))


def normalized(text: str) -> str:
    """A sentence with case and spacing folded: two sentences equal in it are exact copies."""
    return " ".join(text.casefold().split())


def lexical_overlap(a: str, b: str) -> float:
    """Jaccard index of the word sets of two sentences (1.0 for two sentences without words
    that are exact copies, 0.0 for two that are not)."""
    left, right = words(a), words(b)
    if not (left or right):
        return float(normalized(a) == normalized(b))
    return len(left & right) / len(left | right)


def select_paraphrases(query: str, candidates: Iterable[tuple[int, float, str]],
                       options: ParaphraseOptions) -> list[tuple[int, float]]:
    """(id, score) of the best k candidates (id, score, text; best first) that are neither an
    exact copy of the query or of a better candidate, nor a near-copy of the query."""
    seen = {normalized(query)}
    kept = []
    for target, score, text in candidates:
        if len(kept) == options.k or (options.min_score is not None and score < options.min_score):
            break
        key = normalized(text)
        if key in seen or lexical_overlap(query, text) > options.max_overlap:
            continue
        seen.add(key)
        kept.append((target, score))
    return kept


def filter_paraphrases(found: Neighbours, queries: Iterable[str], texts: dict[int, str],
                       options: ParaphraseOptions) -> Neighbours:
    """The paraphrases among each query's candidates `found`, k columns padded with id -1;
    `texts` maps candidate ids to their sentences."""
    sims = np.full((len(found.ids), options.k), np.nan, dtype=np.float32)
    ids = np.full((len(found.ids), options.k), -1, dtype=np.int64)
    for row, (query, row_sims, row_ids) in enumerate(zip(queries, found.sims.tolist(),
                                                         found.ids.tolist())):
        candidates = ((target, sim, texts[target]) for sim, target in zip(row_sims, row_ids)
                      if target >= 0)
        for column, (target, sim) in enumerate(select_paraphrases(query, candidates, options)):
            ids[row, column], sims[row, column] = target, sim
    return Neighbours(sims, ids)


def check_paraphrase_index(index_path: str, meta: IndexMeta, index_text: Optional[str]) -> str:
    """The sentence file of the index's rows; refuses an index whose scores are not similarities."""
    if meta.metric == "l2":
        raise LaserError(f"{index_path}: an l2 index scores distances; build a cosine index "
                         "(laser knn build TEXT --lang L) for paraphrases")
    text = index_text or meta.text
    if not text:
        raise LaserError(f"{index_path}: the index was built from embeddings and records no "
                         "sentences; pass their file with --index-text")
    return text


def find_paraphrases(index: faiss.Index, queries: Vectors, query_texts: Iterable[str],
                     index_text: str, options: ParaphraseOptions = ParaphraseOptions(),
                     progress: bool = False) -> Neighbours:
    """Up to k paraphrases of each query among the indexed sentences (`index_text`, one a line),
    best first, k columns padded with id -1; queries are embeddings of `query_texts`."""
    if options.k < 1 or options.candidates < 1:
        raise LaserError("k and candidates must be at least 1")
    found = search(index, queries, options.k * options.candidates, nprobe=options.nprobe,
                   progress=progress)
    wanted = np.unique(found.ids[found.ids >= 0])
    texts = line_texts(index_text, wanted)
    if len(texts) != len(wanted):
        raise LaserError(f"{index_text} has fewer lines than the index has rows; is it the text "
                         "the index was built from?")
    return filter_paraphrases(found, query_texts, texts, options)


def paraphrases(encoder, sentences: list[str], lang: str, index_path: str,
                options: ParaphraseOptions = ParaphraseOptions()) -> list[list[tuple[str, float]]]:
    """(sentence, score) paraphrases of each sentence from an index built by `laser knn build`."""
    from ..models.spaces import model_origin
    from ..search.index import check_queries, load_index
    index, meta = load_index(index_path)
    index_text = check_paraphrase_index(index_path, meta, None)
    check_queries(index_path, meta, encoder.dim, model_origin(encoder.files, "the sentences"))
    vectors = Vectors(encoder.encode(sentences, lang), normalize=meta.metric == "cosine")
    found = find_paraphrases(index, vectors, sentences, index_text, options)
    texts = line_texts(index_text, found.ids[found.ids >= 0])
    return [[(texts[target], sim) for sim, target in zip(row_sims, row_ids) if target >= 0]
            for row_sims, row_ids in zip(found.sims.tolist(), found.ids.tolist())]
