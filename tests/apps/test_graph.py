"""k-NN graphs against brute force (random and real embeddings, exact and FAISS), `laser knn
graph`, and near-duplicate removal (`laser dedup`) on planted duplicates."""
import gzip
import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.sparse import load_npz

from laser.apps.dedup import DedupOptions, deduplicate, find_duplicates
from laser.apps.graph import knn_graph, load_graph, self_neighbours
from laser.cli import main
from laser.errors import LaserError
from laser.encoder import Encoder
from laser.models.registry import CHECKOUT_MODEL_DIR
from laser.search.approximate import ApproximateSearch
from laser.search.vectors import Neighbours, Vectors

from conftest import CORPUS_SAMPLE, PARITY_MODEL


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def english(count, lang="fra"):
    """The first `count` English sentences of the vendored dev sample."""
    with gzip.open(CORPUS_SAMPLE / "dev" / f"{lang}-eng.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t")[1] for line in itertools.islice(f, count)]


@pytest.fixture(scope="module")
def shipped():
    return Encoder.load(str(CHECKOUT_MODEL_DIR))


@pytest.fixture(scope="module")
def real_rows(shipped):
    return shipped.encode(english(400), "en")


def brute_force_graph(x, k):
    """Every row's k most similar other rows (ties to the lower id), from float64 cosines."""
    x = x.astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    ids = np.lexsort((np.broadcast_to(np.arange(len(x)), sims.shape), -sims))[:, :k]
    return ids, np.take_along_axis(sims, ids, axis=1)


def graph_rows(graph):
    return [(graph.indices[graph.indptr[i]:graph.indptr[i + 1]],
             graph.data[graph.indptr[i]:graph.indptr[i + 1]]) for i in range(graph.shape[0])]


def clustered(rows, dim, seed):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((rows // 20, dim))
    return (centres[rng.integers(0, len(centres), rows)]
            + 0.5 * rng.standard_normal((rows, dim))).astype(np.float32)


@pytest.mark.parametrize("rows, dim, k", [(120, 16, 5), (40, 8, 1), (9, 4, 20)])
def test_exact_graph_is_the_brute_force_graph_on_random_rows(rows, dim, k):
    x = np.random.default_rng(rows).standard_normal((rows, dim)).astype(np.float32)
    graph = knn_graph(Vectors(x), k)
    ids, sims = brute_force_graph(x, min(k, rows - 1))
    assert graph.shape == (rows, rows) and graph.nnz == ids.size
    for i, (columns, scores) in enumerate(graph_rows(graph)):
        np.testing.assert_array_equal(columns, ids[i])
        np.testing.assert_allclose(scores, sims[i], atol=1e-5)


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_exact_graph_is_the_brute_force_graph_on_real_embeddings(real_rows):
    """Real rows have near-ties (within float32 rounding) that may swap places: each edge's score
    is its true cosine and every row holds the brute-force k best scores."""
    graph = knn_graph(Vectors(real_rows), 8)
    ids, sims = brute_force_graph(real_rows, 8)
    unit = real_rows / np.linalg.norm(real_rows, axis=1, keepdims=True)
    swapped = 0
    for i, (columns, scores) in enumerate(graph_rows(graph)):
        assert i not in columns and len(set(columns.tolist())) == 8
        np.testing.assert_allclose(scores, unit[columns] @ unit[i], atol=1e-5)
        np.testing.assert_allclose(scores, sims[i], atol=1e-5)
        swapped += (columns != ids[i]).any()
    assert swapped <= 4


def test_exact_duplicates_find_the_earlier_copy_and_never_themselves():
    x = np.random.default_rng(0).standard_normal((30, 8)).astype(np.float32)
    x[[10, 20, 25]] = x[3]
    found = self_neighbours(Vectors(x), 3)
    assert not (found.ids == np.arange(30)[:, None]).any()
    np.testing.assert_array_equal(found.ids[20], [3, 10, 25])
    np.testing.assert_array_equal(found.ids[3], [10, 20, 25])


def test_faiss_graph_recalls_the_exact_neighbours():
    x = clustered(2000, 32, 1)
    exact = knn_graph(Vectors(x), 10)
    approximate = knn_graph(Vectors(x), 10, ApproximateSearch("IVF16,Flat", nprobe=4))
    ids, sims = brute_force_graph(x, 10)
    hits = sum(len(set(columns) & set(ids[i]))
               for i, (columns, _) in enumerate(graph_rows(approximate)))
    assert hits / ids.size >= 0.95
    for i, (columns, scores) in enumerate(graph_rows(approximate)):
        assert i not in columns
        np.testing.assert_allclose(scores, (x[columns] @ x[i]) / np.linalg.norm(x[columns], axis=1)
                                   / np.linalg.norm(x[i]), atol=1e-5)
    flat = knn_graph(Vectors(x), 10, ApproximateSearch("Flat"))
    np.testing.assert_array_equal(flat.indices, exact.indices)
    np.testing.assert_allclose(flat.data, exact.data, atol=1e-5)


def test_single_row_has_no_edges_and_empty_input_is_refused():
    assert knn_graph(Vectors(np.ones((1, 4), dtype=np.float32)), 3).nnz == 0
    with pytest.raises(LaserError, match="no embeddings"):
        knn_graph(Vectors(np.ones((0, 4), dtype=np.float32)), 3)


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_knn_graph_command_writes_a_scipy_npz_with_provenance(tmp_path, real_rows):
    np.save(tmp_path / "en.npy", real_rows)
    out = tmp_path / "en.graph.npz"
    result = run("knn", "graph", tmp_path / "en.npy", "-k", 4, "-o", out, "-q")
    assert result.exit_code == 0, result.output
    graph, expected = load_npz(out), knn_graph(Vectors(real_rows), 4)
    np.testing.assert_array_equal(graph.indices, expected.indices)
    np.testing.assert_array_equal(graph.data, expected.data)
    np.testing.assert_array_equal(load_graph(out).indices, graph.indices)
    meta = json.loads((tmp_path / "en.graph.npz.json").read_text())
    assert meta["rows"] == 400 and meta["k"] == 4 and meta["edges"] == 1600
    assert meta["search"] == "exact"


def test_knn_graph_command_embeds_text_and_refuses_bad_input(tmp_path):
    text = tmp_path / "s.txt"
    text.write_text("a cat\na dog\nthe cat\n", encoding="utf-8")
    out = tmp_path / "g.npz"
    result = run("knn", "graph", text, "--lang", "en", "--model", PARITY_MODEL, "-k", 1, "-o", out,
                 "-q")
    assert result.exit_code == 0, result.output
    assert load_npz(out).shape == (3, 3) and load_npz(out).nnz == 3
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    result = run("knn", "graph", tmp_path / "bad.npy", "-o", tmp_path / "x.npz")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "laser: error:" in result.output and not (tmp_path / "x.npz").exists()


def test_find_duplicates_takes_the_most_similar_earlier_neighbour():
    found = Neighbours(np.array([[0.99, 0.5], [0.99, 0.97], [0.98, 0.96], [0.97, 0.96]],
                                dtype=np.float32),
                       np.array([[1, 2], [0, 2], [1, 0], [2, 0]]))
    duplicates = find_duplicates(found, 0.95)
    np.testing.assert_array_equal(duplicates.original, [-1, 0, 1, 2])
    np.testing.assert_allclose(duplicates.score[1:], [0.99, 0.98, 0.97])
    assert duplicates.unsure == 0
    alone = Neighbours(np.array([[0.99, 0.98]], dtype=np.float32), np.array([[4, 5]]))
    assert find_duplicates(alone, 0.95).unsure == 1


@pytest.fixture(scope="module")
def planted(shipped):
    """300 real sentences with 8 near-copies of earlier ones planted after them (upper-cased, or
    spaced out; the shipped model reads both as the original, while a changed full stop already
    costs it 0.06-0.36 of cosine): (lines, {planted position: the line it copies}, their rows)."""
    lines = english(300)
    copies = {40: 3, 90: 50, 91: 50, 150: 149, 200: 7, 250: 120, 260: 0, 299: 298}
    for position, source in sorted(copies.items()):
        variant = lines[source]
        variant = variant.upper() if position % 2 else "  " + variant.replace(" ", "  ") + " "
        lines.insert(position, variant)
    return lines, copies, shipped.encode(lines, "en")


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_dedup_keeps_first_occurrences_and_drops_planted_near_duplicates(planted):
    lines, copies, rows = planted
    duplicates = deduplicate(Vectors(rows), DedupOptions(threshold=0.95, k=10))
    dropped = set(np.flatnonzero(~duplicates.keep).tolist())
    assert dropped == set(copies)
    for position in copies:
        original = int(duplicates.original[position])
        assert original < position and duplicates.keep[original]
        assert lines[original].lower().split() == lines[position].lower().split()


@pytest.mark.slow  # the shipped model: loading and embedding a few hundred sentences
def test_dedup_command_writes_kept_lines_ids_and_report(tmp_path, planted):
    lines, copies, rows = planted
    text = tmp_path / "en.txt"
    text.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    np.save(tmp_path / "en.npy", rows)
    out, ids, report = tmp_path / "kept.txt", tmp_path / "kept.ids", tmp_path / "dups.tsv"
    result = run("dedup", text, "--embeddings", tmp_path / "en.npy", "-o", out, "--kept-ids", ids,
                 "--report", report)
    assert result.exit_code == 0, result.output
    kept_ids = [int(line) for line in ids.read_text().split()]
    assert kept_ids == [i for i in range(len(lines)) if i not in copies]
    assert out.read_text(encoding="utf-8").splitlines() == [lines[i] for i in kept_ids]
    rows = [line.split("\t") for line in report.read_text(encoding="utf-8").splitlines()]
    assert [int(row[0]) for row in rows] == sorted(copies)
    for dropped, original, score, dropped_text, original_text in rows:
        assert float(score) >= 0.95
        assert (dropped_text, original_text) == (lines[int(dropped)], lines[int(original)])
    assert "kept 300 of 308 lines" in result.output


def test_dedup_command_refuses_mismatched_embeddings(tmp_path):
    text = tmp_path / "s.txt"
    text.write_text("one\ntwo\nthree\n", encoding="utf-8")
    np.save(tmp_path / "e.npy", np.ones((2, 4), dtype=np.float32))
    result = run("dedup", text, "--embeddings", tmp_path / "e.npy", "-o", tmp_path / "out.txt")
    assert result.exit_code == 1
    assert result.output.strip() == f"laser: error: {text} has 3 lines but there are 2 embeddings"
    assert not (tmp_path / "out.txt").exists()
