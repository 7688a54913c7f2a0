"""Exact blocked k-NN against brute force, FAISS indexes with metadata, and `laser knn`."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.models.spaces import Origin
from laser.search.approximate import rescored
from laser.search.exact import exact_knn
from laser.search.index import IndexMeta, build_index, check_queries, load_index, save_index, search
from laser.search.vectors import Neighbours, Vectors

from conftest import PARITY, PARITY_MODEL, needs_torch


def unit_rows(rows: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def sign_rows(rows: int, dim: int, seed: int) -> np.ndarray:
    """Rows of +-1 (use a power-of-4 dim): normalised entries and dot products are exact, so ties
    are real ties."""
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(rows, dim)).astype(np.float32)


def brute_force(x: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every row's k best by similarity, ties to the lower id, from the full float64 matrix."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    sims = x.astype(np.float64) @ y.astype(np.float64).T
    ids = np.array([sorted(range(len(y)), key=lambda j: (-row[j], j))[:k] for row in sims])
    return np.take_along_axis(sims, ids, axis=1), ids


@pytest.mark.parametrize("precision", ["float32", pytest.param("float16", marks=needs_torch)])
@pytest.mark.parametrize("nx, ny, k, block", [
    (50, 70, 4, 8), (70, 50, 3, 16), (40, 40, 1, 4), (9, 5, 10, 4), (300, 200, 5, 64),
    (33, 47, 4, 8192)])
def test_exact_knn_matches_brute_force_both_ways(nx, ny, k, block, precision):
    x, y = unit_rows(nx, 24, 1) * 3, unit_rows(ny, 24, 2)
    fwd, bwd = exact_knn(Vectors(x), Vectors(y), k, block=block, precision=precision)
    for found, (queries, base) in ((fwd, (x, y)), (bwd, (y, x))):
        sims, ids = brute_force(queries, base, min(k, len(base)))
        assert found.ids.shape == ids.shape
        np.testing.assert_array_equal(found.ids, ids)
        np.testing.assert_allclose(found.sims, sims, atol=1e-6)


@pytest.mark.parametrize("precision", ["float32", pytest.param("float16", marks=needs_torch)])
@pytest.mark.parametrize("block", [4, 6, 100])
def test_exact_knn_ties_go_to_the_lower_row(block, precision):
    x, y = sign_rows(30, 16, 3), sign_rows(45, 16, 4)
    y[20:40] = y[3]
    fwd, bwd = exact_knn(Vectors(x), Vectors(y), 6, block=block, precision=precision)
    for found, (queries, base) in ((fwd, (x, y)), (bwd, (y, x))):
        sims, ids = brute_force(queries, base, 6)
        np.testing.assert_array_equal(found.ids, ids)
        np.testing.assert_array_equal(found.sims, sims.astype(np.float32))


@needs_torch  # float16 products run in torch
def test_half_precision_screening_keeps_float32_results_among_near_ties():
    """Similarities closer than float16 can tell apart: the re-scored result is float32's."""
    rng = np.random.default_rng(12)
    centres = unit_rows(6, 256, 13)
    y = np.repeat(centres, 40, axis=0) + 2e-3 * rng.standard_normal((240, 256)).astype(np.float32)
    x = np.repeat(centres, 30, axis=0) + 2e-3 * rng.standard_normal((180, 256)).astype(np.float32)
    half = exact_knn(Vectors(x), Vectors(y), 5, block=16, precision="float16")
    for found, (queries, base) in zip(half, ((x, y), (y, x))):
        sims, ids = brute_force(queries, base, 6)
        np.testing.assert_allclose(found.sims, sims[:, :5], rtol=0, atol=1e-6)
        clear = np.all(np.diff(sims, axis=1) < -2e-6, axis=1)
        np.testing.assert_array_equal(found.ids[clear], ids[clear, :5])
        assert clear.mean() > 0.3
        assert (np.abs(np.diff(sims, axis=1)) < 2 ** -11).mean() > 0.5


def test_rescored_candidates_get_exact_scores_best_first_ties_to_lower_id():
    """Re-scoring ignores the index's scores and order, skips -1 slots and breaks ties by id."""
    x, y = sign_rows(40, 16, 3), sign_rows(30, 16, 4)
    rng = np.random.default_rng(5)
    ids = np.stack([rng.permutation(30)[:12] for _ in range(40)])
    ids[::7, -3:] = -1
    candidates = Neighbours(rng.random(ids.shape).astype(np.float32), ids)
    found = rescored(candidates, Vectors(x), Vectors(y), 4, batch=16)
    for row in range(40):
        listed = sorted(int(j) for j in ids[row] if j >= 0)
        sims, best = brute_force(x[row:row + 1], y[listed], 4)
        assert found.ids[row].tolist() == [listed[j] for j in best[0]]
        np.testing.assert_allclose(found.sims[row], sims[0], atol=1e-6)


def test_vectors_select_rows_normalise_and_refuse_nan():
    matrix = np.arange(12, dtype=np.float32).reshape(4, 3) + 1
    picked = Vectors(matrix, rows=np.array([3, 1])).block(0, 2)
    np.testing.assert_allclose(picked, matrix[[3, 1]] / np.linalg.norm(matrix[[3, 1]], axis=1,
                                                                       keepdims=True), rtol=1e-6)
    matrix[2, 1] = np.nan
    with pytest.raises(LaserError, match=r"emb.npy: embedding row 2 \(counted from 0, as `ids` outputs count\) holds NaN"):
        Vectors(matrix, name="emb.npy").block(0, 4)


def test_exact_knn_refuses_other_dimension_and_empty_sets():
    with pytest.raises(LaserError, match="dimension 8 but b has 6"):
        exact_knn(Vectors(unit_rows(3, 8, 0), "a"), Vectors(unit_rows(3, 6, 0), "b"), 2)
    with pytest.raises(LaserError, match="empty"):
        exact_knn(Vectors(np.zeros((0, 8), np.float32)), Vectors(unit_rows(3, 8, 0)), 2)


def test_flat_index_search_is_exact_and_self_search_skips_identity():
    base = unit_rows(200, 16, 5)
    base[50] = base[10]
    index = build_index(Vectors(base), "Flat")
    found = search(index, Vectors(base[:60]), 3, batch=7)
    sims, ids = brute_force(base[:60], base, 3)
    np.testing.assert_allclose(found.sims, sims, atol=1e-5)
    assert (found.ids[:, 0] == np.arange(60))[np.r_[0:10, 11:50, 51:60]].all()
    own = search(index, Vectors(base), 3, exclude_self=True)
    assert own.ids.shape == (200, 3)
    assert not (own.ids == np.arange(200)[:, None]).any()
    assert own.ids[10, 0] == 50 and own.ids[50, 0] == 10
    others = np.r_[0:10, 11:50, 51:200]
    np.testing.assert_allclose(own.sims[others], brute_force(base, base, 4)[0][others, 1:],
                               atol=1e-5)


def test_ivf_index_trains_on_a_sample_and_finds_near_duplicates(tmp_path):
    base = unit_rows(3000, 32, 6)
    queries = base[::10] + 0.01 * unit_rows(300, 32, 7)
    index = build_index(Vectors(base), "IVF16,Flat", train_size=1000)
    assert index.is_trained and index.ntotal == 3000
    found = search(index, Vectors(queries), 1, nprobe=4)
    assert (found.ids[:, 0] == np.arange(0, 3000, 10)).mean() > 0.95
    meta = IndexMeta(32, "cosine", 3000, "IVF16,Flat", model="abc")
    save_index(index, meta, tmp_path / "i.faiss")
    loaded, meta = load_index(tmp_path / "i.faiss")
    assert (meta.dim, meta.count, meta.factory, meta.model) == (32, 3000, "IVF16,Flat", "abc")
    np.testing.assert_array_equal(search(loaded, Vectors(queries), 1, nprobe=4).ids, found.ids)


def test_metadata_refuses_mismatched_queries_and_broken_files(tmp_path):
    meta = IndexMeta(16, "cosine", 5, "Flat", model="a" * 64)
    with pytest.raises(LaserError, match="16-d vectors but the queries are 8-d"):
        check_queries("i.faiss", meta, 8, Origin("q", sha256="a" * 64))
    with pytest.raises(LaserError, match=r"i.faiss \(model aaaaaaaaaaaa\) and q \(model "
                                         r"bbbbbbbbbbbb\) are not in one"):
        check_queries("i.faiss", meta, 16, Origin("q", sha256="b" * 64))
    with pytest.raises(LaserError, match=r"and the queries \(model bbbbbbbbbbbb\) are not in"):
        check_queries("i.faiss", meta, 16, "b" * 64)  # a model's sha256, as laser serve passes it
    with pytest.warns(UserWarning, match="no sidecar records the model of q, so nothing"):
        check_queries("i.faiss", meta, 16, Origin("q"))
    index = build_index(Vectors(unit_rows(5, 16, 0)), "Flat")
    save_index(index, meta, tmp_path / "i.faiss")
    (tmp_path / "i.faiss.json").write_text(json.dumps(dict(vars(meta), count=6)))
    with pytest.raises(LaserError, match="holds 5 x 16 vectors but i.faiss.json says 6 x 16"):
        load_index(tmp_path / "i.faiss")
    (tmp_path / "i.faiss.json").unlink()
    with pytest.raises(LaserError, match="metadata i.faiss.json is missing"):
        load_index(tmp_path / "i.faiss")


def test_bad_factory_and_too_few_training_points():
    with pytest.raises(LaserError, match="invalid FAISS index 'IVF,Bogus'"):
        build_index(Vectors(unit_rows(10, 8, 0)), "IVF,Bogus")
    with pytest.raises(LaserError, match=r"^cannot train 'IVF64,Flat' on 10 vectors of \w+: its 64 "
                                         "lists need at least as many vectors; use fewer"):
        build_index(Vectors(unit_rows(10, 8, 0)), "IVF64,Flat")
    with pytest.raises(LaserError, match="its 256 PQ centroids need at least as many vectors"):
        build_index(Vectors(unit_rows(100, 8, 0)), "IVF4,PQ2x8")


def test_cli_build_search_info_with_text_columns(tmp_path):
    base, queries = unit_rows(40, 16, 8), unit_rows(5, 16, 9)
    queries[2] = base[17]
    np.save(tmp_path / "base.npy", base)
    queries.astype(np.float16).tofile(tmp_path / "q.raw")
    (tmp_path / "base.txt").write_text("".join(f"target {i}\n" for i in range(40)))
    (tmp_path / "q.txt").write_text("".join(f"query {i}\n" for i in range(5)))
    runner = CliRunner()
    built = runner.invoke(main, ["knn", "build", str(tmp_path / "base.npy"), "-o",
                                 str(tmp_path / "base.faiss"), "-q"])
    assert built.exit_code == 0, built.output
    info = json.loads(runner.invoke(main, ["knn", "info", str(tmp_path / "base.faiss")]).output)
    assert [info[key] for key in ("dim", "count", "metric")] == [16, 40, "cosine"]
    assert info["factory"] == "Flat"
    result = runner.invoke(main, ["knn", "search", str(tmp_path / "base.faiss"),
                                  str(tmp_path / "q.raw"), "--dim", "16", "--fp16", "-k", "3", "-q",
                                  "--query-text", str(tmp_path / "q.txt"),
                                  "--target-text", str(tmp_path / "base.txt")])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) == 15
    _, ids = brute_force(queries.astype(np.float16).astype(np.float32), base, 3)
    assert [int(row[2]) for row in rows] == ids.ravel().tolist()
    assert [row[1] for row in rows[:3]] == ["1", "2", "3"]
    assert rows[6][:3] == ["2", "1", "17"] and float(rows[6][3]) == pytest.approx(1, abs=1e-3)
    assert rows[6][4:] == ["query 2", "target 17"]


def test_cli_search_refuses_other_dimension_without_output(tmp_path):
    np.save(tmp_path / "base.npy", unit_rows(10, 16, 0))
    np.save(tmp_path / "q.npy", unit_rows(3, 8, 0))
    runner = CliRunner()
    runner.invoke(main, ["knn", "build", str(tmp_path / "base.npy"), "-o", str(tmp_path / "i")])
    result = runner.invoke(main, ["knn", "search", str(tmp_path / "i"), str(tmp_path / "q.npy"),
                                  "-o", str(tmp_path / "out.tsv")])
    assert result.exit_code == 1
    assert "the index holds 16-d vectors but the queries are 8-d" in result.output
    assert not (tmp_path / "out.tsv").exists()


def test_cli_indexes_and_queries_text_with_the_model(tmp_path):
    model, text = PARITY_MODEL, PARITY / "inputs/en.txt"
    runner = CliRunner()
    built = runner.invoke(main, ["knn", "build", str(text), "--lang", "en", "--model", str(model),
                                 "-o", str(tmp_path / "en.faiss"), "-q"])
    assert built.exit_code == 0, built.output
    meta = json.loads((tmp_path / "en.faiss.json").read_text())
    assert (meta["count"], meta["dim"]) == (30, 80) and len(meta["model"]) == 64
    found = runner.invoke(main, ["knn", "search", str(tmp_path / "en.faiss"), str(text), "--lang",
                                 "en", "--model", str(model), "-k", "1", "-q",
                                 "--target-text", str(text)])
    assert found.exit_code == 0, found.output
    rows = [line.split("\t") for line in found.output.splitlines()]
    assert [row[2] for row in rows] == [str(i) for i in range(30)]
    assert all(row[4] == row[5] for row in rows)
    np.save(tmp_path / "q.npy", np.load(PARITY / "expected/en.npy"))
    (tmp_path / "q.npy.json").write_text(json.dumps({"model_sha256": "f" * 64}))
    refused = runner.invoke(main, ["knn", "search", str(tmp_path / "en.faiss"),
                                   str(tmp_path / "q.npy")])
    assert refused.exit_code == 1
    assert "q.npy (model ffffffffffff) are not in one embedding space" in refused.output


def test_cli_search_says_embeddings_given_as_the_index_are_not_one(tmp_path):
    """`laser knn search en.npy de.npy`: the first argument is embeddings (with the sidecar
    `laser embed` writes), which need `laser knn build` first."""
    (tmp_path / "en.txt").write_text("Hello world.\nThe cat sleeps.\n", encoding="utf-8")
    runner = CliRunner()
    for name in ("en", "de"):
        embedded = runner.invoke(main, ["embed", str(tmp_path / "en.txt"), "-o",
                                        str(tmp_path / f"{name}.npy"), "--lang", "en", "-q"])
        assert embedded.exit_code == 0, embedded.output
    result = runner.invoke(main, ["knn", "search", str(tmp_path / "en.npy"),
                                  str(tmp_path / "de.npy")])
    assert result.exit_code == 1 and not result.stdout
    assert result.stderr == (f"laser: error: {tmp_path / 'en.npy'}: embeddings, not an index "
                             "(en.npy.json is their sidecar); index them first: laser knn build "
                             f"{tmp_path / 'en.npy'} -o {tmp_path / 'en.index'}, then search "
                             "that index\n")
