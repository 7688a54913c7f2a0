"""`laser knn build --index/--metric` and `knn search --nprobe/--ef-search/--exclude-self`
through the command line, against brute-force numpy neighbours."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main


def knn(*args):
    result = CliRunner().invoke(main, ["knn", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def build_and_search(tmp_path, base, queries, k, build=(), search=()):
    """(ids, scores) per query as written by `knn search`; -1 / nan where fewer than k came."""
    np.save(tmp_path / "base.npy", base)
    np.save(tmp_path / "q.npy", queries)
    knn("build", tmp_path / "base.npy", "-o", tmp_path / "base.faiss", "-q", *build)
    return read_hits(knn("search", tmp_path / "base.faiss", tmp_path / "q.npy", "-k", k, "-q",
                         *search).stdout, len(queries), k)


def read_hits(output, queries, k):
    ids, scores = np.full((queries, k), -1), np.full((queries, k), np.nan)
    for line in output.splitlines():
        query, rank, target, score = line.split("\t")[:4]
        ids[int(query), int(rank) - 1], scores[int(query), int(rank) - 1] = int(target), float(score)
    return ids, scores


def brute_force(base, queries, k, metric="cosine"):
    """Top-k ids and scores: cosine / inner product descending, squared L2 ascending."""
    x, y = queries.astype(np.float64), base.astype(np.float64)
    if metric == "cosine":
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        y = y / np.linalg.norm(y, axis=1, keepdims=True)
    if metric == "l2":
        scores = -((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    else:
        scores = x @ y.T
    ids = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    found = np.take_along_axis(scores, ids, axis=1)
    return ids, -found if metric == "l2" else found


def rows_with_norms(n, dim, seed):
    """Gaussian rows with norms spread over 0.2-5, so cosine, ip and l2 rank them differently."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim))
    rows *= rng.uniform(0.2, 5, (n, 1)) / np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_metric_ranks_and_scores_like_brute_force(tmp_path, metric):
    base, queries = rows_with_norms(300, 16, 0), rows_with_norms(40, 16, 1)
    ids, scores = build_and_search(tmp_path, base, queries, 5, build=["--metric", metric])
    expected_ids, expected_scores = brute_force(base, queries, 5, metric)
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-4, atol=1e-4)
    others = [brute_force(base, queries, 5, other)[0] for other in ("cosine", "ip", "l2")]
    assert sum((other == expected_ids).all() for other in others) == 1  # the metrics disagree
    assert json.loads((tmp_path / "base.faiss.json").read_text())["metric"] == metric


def clusters(lists=16, size=20, dim=16, seed=2):
    """`lists` tight, far-apart clusters of `size` rows; one query at each cluster centre."""
    rng = np.random.default_rng(seed)
    centres = 10 * rng.standard_normal((lists, dim))
    base = np.repeat(centres, size, axis=0) + 0.1 * rng.standard_normal((lists * size, dim))
    return base.astype(np.float32), centres.astype(np.float32)


def test_ivf_index_with_nprobe_reaching_it(tmp_path):
    """k = 30 > a cluster's 20 rows: one probed list misses some of the answer, all 16 lists
    (nprobe = nlist) make IVF exact."""
    base, queries = clusters()
    expected, _ = brute_force(base, queries, 30, "l2")
    build = ["--index", "IVF16,Flat", "--metric", "l2"]
    every_list, _ = build_and_search(tmp_path, base, queries, 30, build, ["--nprobe", 16])
    np.testing.assert_array_equal(every_list, expected)
    one_list, _ = build_and_search(tmp_path, base, queries, 30, build, ["--nprobe", 1])
    assert (one_list == -1).any()  # fewer than 30 rows in the one list visited
    assert (one_list != expected).any(axis=1).sum() >= 4
    info = json.loads(knn("info", tmp_path / "base.faiss").output)
    assert (info["faiss_class"], info["factory"]) == ("IndexIVFFlat", "IVF16,Flat")


def test_ivf_pq_index_finds_unambiguous_nearest_rows(tmp_path):
    rng = np.random.default_rng(3)
    base = rng.standard_normal((1000, 32)).astype(np.float32)
    queries = base[::10] + 0.01 * rng.standard_normal((100, 32)).astype(np.float32)
    ids, _ = build_and_search(tmp_path, base, queries, 1, ["--index", "IVF4,PQ8x4", "--metric", "l2"],
                              ["--nprobe", 4])
    np.testing.assert_array_equal(ids[:, 0], np.arange(0, 1000, 10))
    assert json.loads(knn("info", tmp_path / "base.faiss").output)["faiss_class"] == "IndexIVFPQ"


def test_hnsw_index_with_ef_search_reaching_it(tmp_path):
    """Greedy search (efSearch 1) misses some true nearest rows of random 64-d data; a breadth
    as large as the index visits every row, so it is exact."""
    rng = np.random.default_rng(4)
    base = rng.standard_normal((2000, 64)).astype(np.float32)
    queries = rng.standard_normal((200, 64)).astype(np.float32)
    expected, _ = brute_force(base, queries, 1)
    build = ["--index", "HNSW8"]
    wide, _ = build_and_search(tmp_path, base, queries, 1, build, ["--ef-search", 2000])
    np.testing.assert_array_equal(wide, expected)
    narrow, _ = build_and_search(tmp_path, base, queries, 1, build, ["--ef-search", 1])
    assert (narrow != expected).any()
    assert json.loads(knn("info", tmp_path / "base.faiss").output)["faiss_class"] == "IndexHNSWFlat"


def test_exclude_self_drops_each_rows_own_id_even_among_duplicates(tmp_path):
    base = rows_with_norms(100, 16, 5)
    base[6] = base[5]  # a duplicate: rows 5 and 6 tie for first for either query
    ids, scores = build_and_search(tmp_path, base, base, 3, search=["--exclude-self"])
    full_ids, full_scores = brute_force(base, base, 4)
    for row in range(100):
        keep = full_ids[row] != row
        if keep.all():
            keep[-1] = False
        tie = (lambda a: np.where(a == 6, 5, a)) if row not in (5, 6) else (lambda a: a)
        np.testing.assert_array_equal(tie(ids[row]), tie(full_ids[row][keep]))
        np.testing.assert_allclose(scores[row], full_scores[row][keep], atol=1e-5)
    assert ids[5, 0] == 6 and ids[6, 0] == 5
    assert not (ids == np.arange(100)[:, None]).any()
