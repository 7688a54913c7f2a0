"""The pieces of document pairing (`laser.align.pairing`) on made-up vectors: document vectors
keep the order of sentences, boilerplate weighs little, candidates come both ways, and pairs are
taken one-to-one, best first, down to the threshold."""
from __future__ import annotations

import numpy as np
import pytest

from laser.align.collection import Document, folder_names, read_collection
from laser.align.pairing import (CachedEmbedder, DocumentMatch, LineRarity, PairingOptions,
                                 Side, candidate_pairs, document_vector, document_vectors,
                                 one_to_one, position_weights)
from laser.align.spool import SpooledCollection
from laser.errors import LaserError


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_document_is_closer_to_itself_in_order_than_reversed():
    rows = unit(np.random.default_rng(0).standard_normal((20, 16)).astype(np.float32))
    weights = np.ones(20)
    same = document_vector(rows, weights, 8)
    reversed_ = document_vector(rows[::-1], weights, 8)
    assert float(same @ same) == pytest.approx(1.0, abs=1e-5)
    assert float(same @ reversed_) < 0.8 * float(same @ same)
    # one stretch only: order no longer counts, the vector is the weighted mean's direction
    np.testing.assert_allclose(document_vector(rows, weights, 1),
                               document_vector(rows[::-1], weights, 1), atol=1e-6)


def test_position_weights_share_each_sentence_among_nearby_stretches():
    weights = position_weights(8, 4)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    assert list(weights.argmax(axis=1)) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_line_every_document_holds_weighs_least():
    rarity = LineRarity()
    for i in range(5):
        rarity.add(["Home | Contact", f"Sentence {i}.", "Home | Contact"])
    common, same, rare = rarity.weights(["home  |  CONTACT", "Home | Contact", "Sentence 3."])
    assert common == same == pytest.approx(np.log1p(5 / 5)) and rare == pytest.approx(np.log1p(5))


def test_candidates_come_from_both_sides():
    src = unit(np.array([[1, 0, 0], [0.9, 0.1, 0]], dtype=np.float32))
    trg = unit(np.array([[1, 0.05, 0], [0.5, 0.5, 0.7]], dtype=np.float32))
    # each source's nearest target is 0; target 1's nearest source is 1: both ways kept
    assert candidate_pairs(src, trg, 1) == [(0, 0), (1, 0), (1, 1)]


def test_one_to_one_takes_the_best_first_and_stops_at_the_threshold():
    matches = [DocumentMatch(0, 0, 0.9), DocumentMatch(0, 1, 0.95), DocumentMatch(1, 1, 0.8),
               DocumentMatch(1, 0, 0.7), DocumentMatch(2, 2, 0.3)]
    kept = one_to_one(matches, 0.5)
    assert [(m.src, m.trg, m.score) for m in kept] == [(0, 1, 0.95), (1, 0, 0.7)]


def test_cached_embedder_embeds_each_text_once():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.array([[len(text), 1.0] for text in texts], dtype=np.float32)
    cached = CachedEmbedder(embed)
    np.testing.assert_array_equal(cached(["a", "bb", "a"]), [[1, 1], [2, 1], [1, 1]])
    np.testing.assert_array_equal(cached(["bb", "ccc"]), [[2, 1], [3, 1]])
    assert calls == [["a", "bb"], ["ccc"]]


def ones(texts):
    return np.ones((len(texts), 4), np.float32)


def test_an_empty_document_gets_a_zero_vector(tmp_path):
    documents = [Document("a", "", ["x", "y"]), Document("b", "", [])]
    with SpooledCollection(str(tmp_path / "spool")) as spool:
        vectors = document_vectors(Side.read(documents, spool, ones), 2)
    assert vectors.shape == (2, 8) and not vectors[1].any()
    with SpooledCollection(str(tmp_path / "empty")) as spool:
        assert document_vectors(Side.read(documents[1:], spool, ones), 2).shape == (1, 0)


def test_a_spooled_collection_gives_back_each_document(tmp_path):
    documents = [Document("a", "", ["Eins.", "", "tab\there", "line\nbreak"]),
                 Document("b", "", []), Document("c", "", ["Ünïcode ✓"])]
    with SpooledCollection(str(tmp_path / "spool")) as spool:
        for document in documents:
            spool.add(document)
        assert spool.names == ["a", "b", "c"] and len(spool) == 3
        assert spool.sentences(2) == ["Ünïcode ✓"] and spool.sentences(1) == []
        assert list(spool) == [document.sentences for document in documents]


def test_vectors_do_not_depend_on_how_documents_are_batched(tmp_path, monkeypatch):
    import laser.align.pairing as pairing
    rng = np.random.default_rng(1)
    table = {}

    def embed(texts):
        return np.stack([table.setdefault(text, rng.standard_normal(8).astype(np.float32))
                         for text in texts])
    documents = [Document(str(n), "", [f"s{(n * 7 + k) % 23}" for k in range(3 + n % 5)])
                 for n in range(12)]
    with SpooledCollection(str(tmp_path / "a")) as spool:
        whole = document_vectors(Side.read(documents, spool, embed), 4)
    monkeypatch.setattr(pairing, "VECTOR_BATCH", 1)
    with SpooledCollection(str(tmp_path / "b")) as spool:
        one_by_one = document_vectors(Side.read(documents, spool, embed), 4)
    np.testing.assert_allclose(whole, one_by_one, atol=1e-6)


def test_options_are_checked():
    with pytest.raises(LaserError, match="--pair-threshold 1.5"):
        PairingOptions(threshold=1.5)


def test_a_folder_collection_reads_every_file_but_hidden_ones(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.txt").write_text("Eins.\nZwei.\n", encoding="utf-8")
    (tmp_path / "one.txt").write_text("Hallo.\n", encoding="utf-8")
    (tmp_path / ".work").mkdir()
    (tmp_path / ".work" / "manifest.json").write_text("{}", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("x\n", encoding="utf-8")
    assert folder_names(str(tmp_path)) == ["b/two.txt", "one.txt"]
    documents = list(read_collection(str(tmp_path)))
    assert [(d.name, d.sentences) for d in documents] == [("b/two.txt", ["Eins.", "Zwei."]),
                                                          ("one.txt", ["Hallo."])]


def test_a_bad_document_is_named_with_its_line(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"fine\ncaf\xe9\n")
    with pytest.raises(LaserError, match=r"bad.txt:2"):
        list(read_collection(str(tmp_path)))


def test_the_embedding_cache_keeps_the_recently_used_within_its_budget(tmp_path):
    from laser.align.pairing import EmbeddingCache
    calls = []

    def embed(texts):
        calls.append(len(texts))
        return np.ones((len(texts), 4), np.float32)
    documents = [Document(str(n), "", [f"s{n}-{k}" for k in range(3)]) for n in range(3)]
    with SpooledCollection(str(tmp_path / "spool")) as spool:
        side = Side.read(documents, spool, embed)
        one = EmbeddingCache(budget=0, longest=2).get(side, 0)
        cache = EmbeddingCache(budget=2 * one.size, longest=2)
        calls.clear()
        for number in (0, 1, 0, 2, 0, 1):
            cache.get(side, number)
        # runs of 1 and 2 sentences: 3 + 2 texts a document; two held, 2 pushes out the least
        # recently used (1), so that 0 is found again and 1 embedded again
        assert calls == [5, 5, 5, 5] and cache.size <= 2 * one.size
        assert len(EmbeddingCache(budget=0, longest=2).held) == 0
