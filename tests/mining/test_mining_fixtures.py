"""`laser mine` reproduces every output of the official mine_bitexts.py in the mining fixtures."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main

from conftest import MINING_FIXTURES

FIXTURES = MINING_FIXTURES
RUNS = json.loads((FIXTURES / "runs.json").read_text())
RTOL, ATOL = 1e-5, 1e-6


def run_id(run):
    return f"{run['corpus']}-{Path(run['output']).stem}"


def laser_mine(run, out, *extra, embeddings="raw"):
    corpus = FIXTURES / run["corpus"]
    args = ["mine", corpus / "src.txt", corpus / "trg.txt",
            "--src-embeddings", corpus / f"src.{embeddings}",
            "--trg-embeddings", corpus / f"trg.{embeddings}", "--mode", run["mode"],
            "-k", run["k"], "--margin", run["margin"], "--retrieval", run["retrieval"],
            "--threshold", run["threshold"], "-o", out, *extra]
    if embeddings == "raw":
        args += ["--dim", run["dim"]]
    if run["unify"]:
        args.append("--unify")
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8").splitlines()


def official(run):
    return (FIXTURES / run["corpus"] / run["output"]).read_text(encoding="utf-8").splitlines()


def rows(lines):
    return [(float(score), src, trg) for score, src, trg in (line.split("\t") for line in lines)]


def close(a, b):
    return abs(a - b) <= ATOL + RTOL * abs(b)


def assert_same_pairs(ours, theirs, threshold=None):
    """Same (src, trg) pairs with close scores, in any order. With a threshold, a pair scoring
    within float noise of it may be on either side (k=1 distance margins are 0 up to noise)."""
    def keep(rows_):
        return {(s, t): v for v, s, t in rows_ if threshold is None or abs(v - threshold) > ATOL}
    mine_, their = keep(ours), keep(theirs)
    assert len(mine_) == len([r for r in ours if threshold is None or abs(r[0] - threshold) > ATOL])
    assert mine_.keys() == their.keys()
    assert all(close(mine_[pair], their[pair]) for pair in their)


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_official_output_is_reproduced(tmp_path, run):
    legacy = ["--legacy-line-map"] if run["mode"] != "mine" else []
    ours, theirs = laser_mine(run, tmp_path / "out.tsv", *legacy), official(run)
    if run["mode"] == "search":
        assert ours == theirs
    elif run["mode"] == "score":
        assert [r[1:] for r in rows(ours)] == [r[1:] for r in rows(theirs)]
        assert all(close(a[0], b[0]) for a, b in zip(rows(ours), rows(theirs)))
    else:
        scores = [r[0] for r in rows(ours)]
        assert scores == sorted(scores, reverse=True)
        threshold = run["threshold"] if run["retrieval"] == "max" else None
        assert_same_pairs(rows(ours), rows(theirs), threshold)


def test_scores_are_printed_as_the_official_tool_prints_them(tmp_path):
    """mine: Python's repr of the float32 score as a float; score: numpy's float32 repr."""
    def as_mine(text):
        return repr(float(np.float32(text)))

    def as_score(text):
        return str(np.float32(text))
    for mode, style in (("mine", as_mine), ("score", as_score)):
        run = next(r for r in RUNS if r["corpus"] == "main" and r["mode"] == mode and r["unify"])
        for lines in (laser_mine(run, tmp_path / "o.tsv"), official(run)):
            printed = [line.split("\t")[0] for line in lines]
            assert printed == [style(text) for text in printed]
            assert printed != [as_score(text) if style is as_mine else as_mine(text)
                               for text in printed]


def test_npy_and_raw_embeddings_give_the_same_output(tmp_path):
    run = next(r for r in RUNS if r["corpus"] == "main" and r["mode"] == "mine" and r["unify"])
    assert laser_mine(run, tmp_path / "a", embeddings="npy") == laser_mine(run, tmp_path / "b")


def unified_rank(path):
    """For each line, the rank of its text's first occurrence (the official row lookup)."""
    seen = {}
    return [seen.setdefault(line, len(seen)) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("margin", ["ratio", "absolute"])
def test_default_line_mapping_is_the_intended_one(tmp_path, margin):
    """Without --unify the official tool looks line L up at row rank(L), which shifts every line
    after the first duplicate; by default each line is looked up at its own row."""
    search = next(r for r in RUNS if r["corpus"] == "main" and r["mode"] == "search"
                  and not r["unify"] and r["k"] == 4 and r["margin"] == margin)
    ours, theirs = laser_mine(search, tmp_path / "s"), official(search)
    src_rank = unified_rank(FIXTURES / "main/src.txt")
    assert src_rank != list(range(len(src_rank)))
    for line, row in enumerate(src_rank):
        assert ours[row] == theirs[line]
    assert ours != theirs
    score = dict(search, mode="score", output=search["output"].replace("search", "score"))
    ours, theirs = rows(laser_mine(score, tmp_path / "c")), rows(official(score))
    trg_rank = unified_rank(FIXTURES / "main/trg.txt")
    checked = 0
    for line, (row_s, row_t) in enumerate(zip(src_rank, trg_rank)):
        if row_s == row_t:
            assert ours[row_s][1:] == theirs[line][1:] and close(ours[row_s][0], theirs[line][0])
            checked += 1
    assert checked > 100


def test_mined_pairs_recover_the_gold_pairs(tmp_path):
    run = next(r for r in RUNS if r["corpus"] == "main" and r["mode"] == "mine" and r["unify"]
               and r["retrieval"] == "max" and r["threshold"] > 1)
    mined = {(s, t) for _, s, t in rows(laser_mine(run, tmp_path / "o", "--output-format", "ids"))}
    gold = {tuple(line.split("\t"))
            for line in (FIXTURES / "main/gold.tsv").read_text().splitlines()}
    assert len(mined & gold) > 250 and len(mined & gold) / len(mined) > 0.6
