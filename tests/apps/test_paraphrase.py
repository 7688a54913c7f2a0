"""Paraphrases from a `laser knn build` index: exact copies and near-copies left out, the rest the
real nearest neighbours (brute force), through the library and `laser paraphrase`."""
import gzip
import itertools

import numpy as np
import pytest
from click.testing import CliRunner

from laser.apps.paraphrase import (ParaphraseOptions, lexical_overlap, normalized, paraphrases,
                                   select_paraphrases)
from laser.cli import main
from laser.encoder import Encoder
from laser.models.registry import CHECKOUT_MODEL_DIR

from conftest import CORPUS_SAMPLE

QUERIES = ["Tom said you told him to wait.", "Please write with a pen.", "I'm hungry."]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_lexical_overlap_is_the_jaccard_index_of_word_sets():
    assert lexical_overlap("The cat sat.", "the CAT sat!") == 1.0
    assert lexical_overlap("the cat sat", "the dog sat") == pytest.approx(2 / 4)
    assert lexical_overlap("a b c d", "e f") == 0.0
    assert lexical_overlap("...", " ... ") == 1.0 and lexical_overlap("...", "!!") == 0.0
    assert normalized("  The  Cat. ") == "the cat."


def test_select_leaves_out_copies_near_copies_and_repeats():
    candidates = [(0, 1.0, "The cat sat on the mat."), (1, 0.99, "the cat sat on the  MAT."),
                  (2, 0.97, "The cat sat on the mat!"), (3, 0.9, "A cat was sitting on the mat."),
                  (4, 0.89, "a cat was sitting on the mat."), (5, 0.8, "The kitten rests."),
                  (6, 0.7, "Dogs bark.")]
    options = ParaphraseOptions(k=2)
    assert select_paraphrases("The cat sat on the mat.", candidates, options) == [(3, 0.9),
                                                                                  (5, 0.8)]
    assert select_paraphrases("The cat sat on the mat.", candidates,
                              ParaphraseOptions(k=5, min_score=0.85)) == [(3, 0.9)]
    assert select_paraphrases("The cat sat on the mat.", candidates,
                              ParaphraseOptions(k=1, max_overlap=1.0)) == [(2, 0.97)]


@pytest.fixture(scope="module")
def shipped():
    return Encoder.load(str(CHECKOUT_MODEL_DIR))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shipped):
    """An index of 300 real sentences plus planted copies of the queries (exact, re-spaced,
    re-punctuated) and a repeated sentence; (directory, index lines, their rows)."""
    with gzip.open(CORPUS_SAMPLE / "dev" / "fra-eng.tsv.gz", "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t")[1] for line in itertools.islice(f, 300)]
    lines += [QUERIES[0], "  " + QUERIES[0].upper(), QUERIES[1].rstrip(".") + "!", lines[10]]
    directory = tmp_path_factory.mktemp("paraphrase")
    (directory / "index.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (directory / "queries.txt").write_text("".join(q + "\n" for q in QUERIES), encoding="utf-8")
    result = run("knn", "build", directory / "index.txt", "--lang", "en", "-o",
                 directory / "index", "-q")
    assert result.exit_code == 0, result.output
    return directory, lines, shipped.encode(lines, "en")


def brute_force_paraphrases(query, query_row, lines, rows, options):
    """The reference: every indexed sentence ranked by cosine (ties to the lower id), filtered."""
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sims = unit @ (query_row / np.linalg.norm(query_row))
    order = sorted(range(len(lines)), key=lambda i: (-sims[i], i))
    seen, kept = {normalized(query)}, []
    for i in order:
        if normalized(lines[i]) in seen or lexical_overlap(query, lines[i]) > options.max_overlap:
            continue
        seen.add(normalized(lines[i]))
        kept.append((i, sims[i]))
    return kept[:options.k]


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_paraphrase_command_returns_real_neighbours_without_copies(corpus, shipped):
    directory, lines, rows = corpus
    out = directory / "paraphrases.tsv"
    result = run("paraphrase", directory / "index", directory / "queries.txt", "--lang", "en",
                 "-k", 3, "-o", out)
    assert result.exit_code == 0, result.output
    assert "wrote 9 paraphrases of 3 sentences" in result.output
    records = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    options = ParaphraseOptions(k=3)
    for number, query in enumerate(QUERIES):
        got = [record for record in records if int(record[0]) == number]
        expected = brute_force_paraphrases(query, shipped.encode(query, "en"), lines, rows,
                                           options)
        assert [int(record[2]) for record in got] == [i for i, _ in expected]
        np.testing.assert_allclose([float(record[3]) for record in got],
                                   [sim for _, sim in expected], atol=1e-5)
        assert [int(record[1]) for record in got] == [1, 2, 3]
        for record in got:
            assert record[4] == query and record[5] == lines[int(record[2])]
            assert normalized(record[5]) != normalized(query)
            assert lexical_overlap(query, record[5]) <= 0.8
        assert len({normalized(record[5]) for record in got}) == 3
    planted = set(range(300, 304))
    assert not planted & {int(record[2]) for record in records}


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_paraphrases_python_api(corpus, shipped):
    directory, lines, rows = corpus
    found = paraphrases(shipped, QUERIES[:1], "en", str(directory / "index"),
                        ParaphraseOptions(k=2))
    expected = brute_force_paraphrases(QUERIES[0], shipped.encode(QUERIES[0], "en"), lines, rows,
                                       ParaphraseOptions(k=2))
    assert [text for text, _ in found[0]] == [lines[i] for i, _ in expected]


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_paraphrase_refuses_an_index_without_sentences(tmp_path, corpus):
    directory, lines, rows = corpus
    np.save(tmp_path / "rows.npy", rows)
    assert run("knn", "build", tmp_path / "rows.npy", "-o", tmp_path / "index", "-q").exit_code == 0
    result = run("paraphrase", tmp_path / "index", directory / "queries.txt", "--lang", "en")
    assert result.exit_code == 1
    assert result.output == (f"laser: error: {tmp_path / 'index'}: the index was built from "
                             "embeddings and records no sentences; pass their file with "
                             "--index-text\n")
    result = run("paraphrase", tmp_path / "index", directory / "queries.txt", "--lang", "en",
                 "--index-text", directory / "index.txt", "-k", 1, "-q")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 3
