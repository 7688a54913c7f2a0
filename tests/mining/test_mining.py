"""`laser mine` against a plain re-statement of the official algorithm, and its error handling."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.mining.corpus import corpus_vectors, scan_corpus
from laser.mining.margins import MARGINS
from laser.mining.mine import MineOptions, mine
from laser.mining.output import write_pairs
from laser.mining.retrieval import RETRIEVALS

from conftest import PARITY, PARITY_MODEL as MODEL


def reference(src_lines, trg_lines, x, y, mode, k, kind, retrieval, threshold, unify):
    """mine_bitexts.py written plainly (double loops), with the documented fixes: identity line
    mapping without --unify, fwd/bwd mining, non-max results best first (stable)."""
    def load(lines):
        inds, sents, seen = [], [], {}
        for line in lines:
            if unify and line in seen:
                inds.append(seen[line])
                continue
            seen[line] = len(sents)
            inds.append(len(sents))
            sents.append(line)
        return inds, sents

    def rows(emb, inds):
        last = {ind: line for line, ind in enumerate(inds)}
        kept = emb[[last[i] for i in range(len(last))]].astype(np.float32)
        return kept / np.linalg.norm(kept, axis=1, keepdims=True)

    def knn(sims, kk):
        ids = [sorted(range(sims.shape[1]), key=lambda j: (-sims[i, j], j))[:kk]
               for i in range(sims.shape[0])]
        return ids, np.array([[sims[i, j] for j in row] for i, row in enumerate(ids)], np.float32)

    src_inds, src_sents = load(src_lines)
    trg_inds, trg_sents = load(trg_lines)
    x, y = rows(x, src_inds), rows(y, trg_inds)
    sim = x @ y.T
    fwd_ids, fwd_sims = knn(sim, min(k, len(y)))
    bwd_ids, bwd_sims = knn(sim.T, min(k, len(x)))
    fwd_mean, bwd_mean = fwd_sims.mean(axis=1), bwd_sims.mean(axis=1)

    def score(i, j):
        a, b = sim[i, j], (fwd_mean[i] + bwd_mean[j]) / np.float32(2)
        return {"absolute": a, "distance": a - b, "ratio": a / b}[kind]

    if mode == "score":
        return [(score(i, j), src_sents[i], trg_sents[j]) for i, j in zip(src_inds, trg_inds)]
    fwd_best = [max(fwd_ids[i], key=lambda j: score(i, j)) for i in range(len(x))]
    bwd_best = [max(bwd_ids[j], key=lambda i: score(i, j)) for j in range(len(y))]
    if mode == "search":
        return [(score(i, fwd_best[i]), src_sents[i], trg_sents[fwd_best[i]]) for i in src_inds]
    fwd = [(score(i, j), i, j) for i, j in enumerate(fwd_best)]
    bwd = [(score(i, j), i, j) for j, i in enumerate(bwd_best)]
    if retrieval == "max":
        found, used_src, used_trg = [], set(), set()
        for s, i, j in sorted(fwd + bwd, key=lambda p: -p[0]):
            if i not in used_src and j not in used_trg:
                used_src.add(i)
                used_trg.add(j)
                if s > threshold:
                    found.append((s, i, j))
    else:
        found = {"fwd": fwd, "bwd": bwd,
                 "intersect": [p for p in fwd if bwd_best[p[2]] == p[1]]}[retrieval]
        found = sorted(found, key=lambda p: -p[0])
    return [(s, src_sents[i], trg_sents[j]) for s, i, j in found]


def sign_rows(rows, seed):
    """+-1 rows of dimension 16 (the first 8 fixed, so similarities are >= 0 and margins finite):
    every normalised similarity is exact, so ties are real ties."""
    signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(rows, 16)).astype(np.float32)
    signs[:, :8] = 1
    return signs


def corpus(n, duplicates, prefix):
    lines = [f"{prefix} {i}" for i in range(n)]
    for line, copy_of in duplicates:
        lines[line] = lines[copy_of]
    return lines


CORPORA = {
    "7x5": (corpus(7, [(5, 1), (6, 1)], "s"), corpus(5, [(3, 0)], "t")),
    "5x9": (corpus(5, [], "s"), corpus(9, [(8, 2), (4, 2)], "t")),
    "12x12": (corpus(12, [(11, 0)], "s"), corpus(12, [], "t")),
}


def write_corpus(directory, lines, embeddings, name):
    (directory / f"{name}.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    np.save(directory / f"{name}.npy", embeddings)
    return str(directory / f"{name}.txt"), str(directory / f"{name}.npy")


def run_ours(directory, src_lines, trg_lines, x, y, mode, k, kind, retrieval, threshold, unify,
             fmt="tsv"):
    src_txt, src_npy = write_corpus(directory, src_lines, x, "src")
    trg_txt, trg_npy = write_corpus(directory, trg_lines, y, "trg")
    src, trg = scan_corpus(src_txt, unify), scan_corpus(trg_txt, unify)
    x = corpus_vectors(src, np.load(src_npy), src_npy)
    y = corpus_vectors(trg, np.load(trg_npy), trg_npy)
    pairs = mine(src, trg, x, y, MineOptions(mode, k, kind, retrieval, threshold))
    write_pairs(str(directory / "out"), pairs, src, trg, fmt, mode)
    return (directory / "out").read_text(encoding="utf-8").splitlines()


def parse(lines):
    return [(float(score), src, trg) for score, src, trg in (line.split("\t") for line in lines)]


def assert_same(ours, expected, rtol=1e-6):
    assert [row[1:] for row in ours] == [row[1:] for row in expected]
    np.testing.assert_allclose([row[0] for row in ours], [float(row[0]) for row in expected],
                               rtol=rtol, atol=1e-7)


@pytest.mark.parametrize("unify", [False, True])
@pytest.mark.parametrize("k", [1, 3, 50])
@pytest.mark.parametrize("kind", MARGINS)
@pytest.mark.parametrize("retrieval", RETRIEVALS)
@pytest.mark.parametrize("name", sorted(CORPORA))
def test_mine_matches_reference_with_ties(tmp_path, name, retrieval, kind, k, unify):
    src_lines, trg_lines = CORPORA[name]
    x, y = sign_rows(len(src_lines), 1), sign_rows(len(trg_lines), 2)
    threshold = 1.0 if kind == "ratio" else 0.1
    ours = parse(run_ours(tmp_path, src_lines, trg_lines, x, y, "mine", k, kind, retrieval,
                          threshold, unify))
    assert_same(ours, reference(src_lines, trg_lines, x, y, "mine", k, kind, retrieval,
                                threshold, unify))


@pytest.mark.parametrize("unify", [False, True])
@pytest.mark.parametrize("k", [1, 4, 50])
@pytest.mark.parametrize("kind", MARGINS)
@pytest.mark.parametrize("name", sorted(CORPORA))
def test_search_and_score_match_reference(tmp_path, name, kind, k, unify):
    src_lines, trg_lines = CORPORA[name]
    x, y = sign_rows(len(src_lines), 3), sign_rows(len(trg_lines), 4)
    searched = run_ours(tmp_path, src_lines, trg_lines, x, y, "search", k, kind, "max", 0, unify)
    expected = reference(src_lines, trg_lines, x, y, "search", k, kind, "max", 0, unify)
    assert searched == [trg for _, _, trg in expected]
    scored = parse(run_ours(tmp_path, src_lines, trg_lines, x, y, "score", k, kind, "max", 0,
                            unify))
    assert_same(scored, reference(src_lines, trg_lines, x, y, "score", k, kind, "max", 0, unify))


@pytest.mark.parametrize("retrieval", RETRIEVALS)
def test_continuous_embeddings_of_different_sizes(tmp_path, retrieval):
    rng = np.random.default_rng(7)
    base = rng.standard_normal((40, 32)).astype(np.float32)
    x = np.concatenate([base[:30] + 0.3 * rng.standard_normal((30, 32)),
                        rng.standard_normal((25, 32))]).astype(np.float32)
    y = np.concatenate([rng.standard_normal((10, 32)),
                        base + 0.5 * rng.standard_normal((40, 32))]).astype(np.float32)
    src_lines, trg_lines = corpus(55, [(54, 3)], "s"), corpus(50, [], "t")
    ours = parse(run_ours(tmp_path, src_lines, trg_lines, x, y, "mine", 4, "ratio", retrieval, 1.02,
                          True))
    expected = reference(src_lines, trg_lines, x, y, "mine", 4, "ratio", retrieval, 1.02, True)
    assert sorted(row[1:] for row in ours) == sorted(row[1:] for row in expected)
    assert len(ours) >= 25
    assert [row[0] for row in ours] == sorted((row[0] for row in ours), reverse=True)
    assert_same(sorted(ours), sorted((float(s), a, b) for s, a, b in expected), rtol=1e-5)


def test_unify_keeps_the_last_embedding_and_maps_back(tmp_path):
    y = np.eye(3, dtype=np.float32)
    x = np.array([[1, 0.1, 0], [0, 0, 1], [0, 1, 0.1]], dtype=np.float32)
    src_lines, trg_lines = ["a", "b", "a"], ["t0", "t1", "t2"]
    unified = parse(run_ours(tmp_path, src_lines, trg_lines, x, y, "mine", 1, "absolute", "max",
                             0, True))
    assert sorted(row[1:] for row in unified) == [("a", "t1"), ("b", "t2")]
    every = parse(run_ours(tmp_path, src_lines, trg_lines, x, y, "mine", 1, "absolute", "max", 0,
                           False))
    assert sorted(row[1:] for row in every) == [("a", "t0"), ("a", "t1"), ("b", "t2")]
    search = run_ours(tmp_path, src_lines, trg_lines, x, y, "search", 1, "absolute", "max", 0, True)
    assert search == ["t1", "t2", "t1"]
    ids = run_ours(tmp_path, src_lines, trg_lines, x, y, "mine", 1, "absolute", "max", 0, True,
                   fmt="ids")
    assert sorted(line.split("\t")[1:] for line in ids) == [["0", "1"], ["1", "2"]]


def test_output_formats_agree(tmp_path):
    src_lines, trg_lines = CORPORA["7x5"]
    x, y = sign_rows(7, 5), sign_rows(5, 6)
    args = (tmp_path, src_lines, trg_lines, x, y, "mine", 3, "ratio", "max", 0, False)
    tsv = parse(run_ours(*args))
    ids = [line.split("\t") for line in run_ours(*args, fmt="ids")]
    records = [json.loads(line) for line in run_ours(*args, fmt="jsonl")]
    assert [(src_lines[int(s)], trg_lines[int(t)]) for _, s, t in ids] == [r[1:] for r in tsv]
    assert [(r["src"], r["trg"], r["src_line"], r["trg_line"]) for r in records] == \
        [(src_lines[int(s)], trg_lines[int(t)], int(s), int(t)) for _, s, t in ids]
    np.testing.assert_allclose([r["score"] for r in records], [r[0] for r in tsv], rtol=1e-6)


def cli(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def small_files(tmp_path, n_src=6, n_trg=5, dim=16):
    src = write_corpus(tmp_path, corpus(n_src, [], "s"), sign_rows(n_src, 8)[:, :dim], "src")
    trg = write_corpus(tmp_path, corpus(n_trg, [], "t"), sign_rows(n_trg, 9)[:, :dim], "trg")
    return src, trg


def test_candidates_lists_every_neighbour_once(tmp_path):
    (src_txt, src_npy), (trg_txt, trg_npy) = small_files(tmp_path)
    out = tmp_path / "cand.tsv"
    result = cli("mine", src_txt, trg_txt, "--src-embeddings", src_npy, "--trg-embeddings", trg_npy,
                 "--mode", "mine", "-k", 2, "--candidates", "--output-format", "ids", "-o", out)
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    pairs = {(int(s), int(t)) for _, s, t in rows}
    assert len(pairs) == len(rows)
    x, y = np.load(src_npy), np.load(trg_npy)
    sims = (x / 4) @ (y / 4).T
    fwd = {(i, j) for i in range(6) for j in sorted(range(5), key=lambda j: (-sims[i, j], j))[:2]}
    bwd = {(i, j) for j in range(5) for i in sorted(range(6), key=lambda i: (-sims[i, j], i))[:2]}
    assert pairs == fwd | bwd
    assert [float(r[0]) for r in rows] == sorted((float(r[0]) for r in rows), reverse=True)


@pytest.mark.parametrize("index", [["--index", "IVF4,Flat", "--nprobe", 4],
                                   ["--index", "IVF4,PQ24x4fs", "--nprobe", 4, "--refine", 8]])
def test_approximate_index_agrees_with_exact_search(tmp_path, index):
    """Compressed codes only pick the candidates: the scores are the exact ones."""
    rng = np.random.default_rng(11)
    base = rng.standard_normal((300, 24)).astype(np.float32)
    x, y = base + 0.2 * rng.standard_normal((300, 24)), base + 0.2 * rng.standard_normal((300, 24))
    src_txt, src_npy = write_corpus(tmp_path, corpus(300, [], "s"), x.astype(np.float32), "src")
    trg_txt, trg_npy = write_corpus(tmp_path, corpus(300, [], "t"), y.astype(np.float32), "trg")
    common = ["mine", src_txt, trg_txt, "--src-embeddings", src_npy, "--trg-embeddings", trg_npy,
              "--mode", "mine"]
    assert cli(*common, "-o", tmp_path / "exact.tsv").exit_code == 0
    result = cli(*common, *index, "-o", tmp_path / "ivf.tsv")
    assert result.exit_code == 0, result.output
    exact, ivf = (parse((tmp_path / n).read_text().splitlines()) for n in ("exact.tsv", "ivf.tsv"))
    assert [r[1:] for r in ivf] == [r[1:] for r in exact]
    np.testing.assert_allclose([r[0] for r in ivf], [r[0] for r in exact], rtol=1e-5)
    assert sum(s.split()[1] == t.split()[1] for _, s, t in exact) > 290


def test_nprobe_without_an_index_is_refused(tmp_path):
    (src_txt, src_npy), (trg_txt, trg_npy) = small_files(tmp_path)
    result = cli("mine", src_txt, trg_txt, "--src-embeddings", src_npy, "--trg-embeddings",
                 trg_npy, "--mode", "mine", "--nprobe", 4, "-o", tmp_path / "out.tsv")
    assert result.exit_code != 0 and "--nprobe goes with --index" in result.output
    assert not (tmp_path / "out.tsv").exists()


def test_final_line_without_newline_keeps_its_last_character_and_unifies(tmp_path):
    (tmp_path / "src.txt").write_text("dup\nother\ndup", encoding="utf-8")
    (tmp_path / "trg.txt").write_text("x\ny\n", encoding="utf-8")
    np.save(tmp_path / "src.npy", np.array([[1, 0], [0, 1], [1, 0.01]], np.float32))
    np.save(tmp_path / "trg.npy", np.array([[1, 0], [0, 1]], np.float32))
    src = scan_corpus(str(tmp_path / "src.txt"), unify=True)
    assert (src.lines, src.sentences, src.embedding_row.tolist()) == (3, 2, [2, 1])
    result = cli("mine", tmp_path / "src.txt", tmp_path / "trg.txt", "--src-embeddings",
                 tmp_path / "src.npy", "--trg-embeddings", tmp_path / "trg.npy", "--mode", "search",
                 "-k", 1, "-o", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["x", "y", "x"]
    mined = cli("mine", tmp_path / "src.txt", tmp_path / "trg.txt", "--src-embeddings",
                tmp_path / "src.npy", "--trg-embeddings", tmp_path / "trg.npy", "--mode", "mine",
                "-k", 1, "--margin", "absolute", "-o", "-")
    assert sorted(line.split("\t")[1] for line in mined.stdout.splitlines()) == ["dup", "other"]


@pytest.mark.parametrize("problem, message", [
    ("lines", "src.txt has 6 lines but .*src.npy holds 7 embeddings"),
    ("dim", "src.npy has dimension 16 but .*trg.npy has 8"),
    ("empty", "trg.txt: empty corpus"),
    ("raw", r"src.raw: raw embeddings without a sidecar \(src.raw.json\): pass their dimension with --dim"),
    ("stdin", "pass a file, not '-'"),
])
def test_bad_input_is_one_clear_error_and_no_output(tmp_path, problem, message):
    (src_txt, src_npy), (trg_txt, trg_npy) = small_files(tmp_path)
    if problem == "lines":
        np.save(src_npy, sign_rows(7, 1))
    elif problem == "dim":
        np.save(trg_npy, sign_rows(5, 1)[:, :8])
    elif problem == "empty":
        Path(trg_txt).write_text("")
    elif problem == "stdin":
        src_txt = "-"
    elif problem == "raw":
        np.load(src_npy).tofile(tmp_path / "src.raw")
        src_npy = tmp_path / "src.raw"
    out = tmp_path / "out.tsv"
    result = cli("mine", src_txt, trg_txt, "--src-embeddings", src_npy, "--trg-embeddings", trg_npy,
                 "--mode", "mine", "-o", out)
    assert result.exit_code == 1
    *said, line = result.output.splitlines()
    assert all(before.startswith(("laser: warning: no sidecar records", "laser: mine ",
                                  "laser: kept the finished work in ")) for before in said)
    assert line.startswith("laser: error: ")
    assert __import__("re").search(message, line), line
    assert not out.exists()  # the stages finished before the error are kept for a re-run
    assert [path.name for path in tmp_path.glob(".out.tsv*")] in ([], [".out.tsv.shards"])


def test_threshold_outside_max_is_ignored_with_a_warning(tmp_path):
    (src_txt, src_npy), (trg_txt, trg_npy) = small_files(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["mine", src_txt, trg_txt, "--src-embeddings", src_npy,
                                  "--trg-embeddings", trg_npy, "--mode", "mine", "--retrieval",
                                  "fwd", "--threshold", "5", "-o", "-"])
    assert result.exit_code == 0
    assert "warning: --threshold is applied only to the pairs of --retrieval max" in result.stderr
    assert len(result.stdout.splitlines()) == 6


def test_embedding_on_the_fly_equals_precomputed_embeddings(tmp_path):
    text = PARITY / "inputs/en.txt"
    precomputed = cli("mine", text, text, "--src-embeddings", PARITY / "expected/en.npy",
                      "--trg-embeddings", PARITY / "expected/en.npy", "--mode", "mine", "-o",
                      tmp_path / "a.tsv")
    assert precomputed.exit_code == 0, precomputed.output
    embedded = cli("mine", text, text, "--src-lang", "en", "--trg-lang", "en", "--model", MODEL,
                   "--mode", "mine", "-o", tmp_path / "b.tsv")
    assert embedded.exit_code == 0, embedded.output
    a, b = (parse((tmp_path / name).read_text(encoding="utf-8").splitlines())
            for name in ("a.tsv", "b.tsv"))
    assert sorted(r[1:] for r in a) == sorted(r[1:] for r in b)
    assert all(src == trg for _, src, trg in b) and len(b) == 30
    np.testing.assert_allclose(sorted(r[0] for r in a), sorted(r[0] for r in b), rtol=1e-4)
    assert not list(tmp_path.glob(".laser-embed-*"))


def test_verbose_prints_a_summary_of_the_written_scores(tmp_path):
    rng = np.random.default_rng(5)
    base = rng.standard_normal((60, 24)).astype(np.float32)
    x, y = base + 0.3 * rng.standard_normal((60, 24)), base + 0.3 * rng.standard_normal((60, 24))
    src_txt, src_npy = write_corpus(tmp_path, corpus(60, [], "s"), x.astype(np.float32), "src")
    trg_txt, trg_npy = write_corpus(tmp_path, corpus(60, [], "t"), y.astype(np.float32), "trg")
    out = tmp_path / "mined.ids"
    result = CliRunner().invoke(main, ["mine", src_txt, trg_txt, "--src-embeddings", src_npy,
                                       "--trg-embeddings", trg_npy, "--mode", "mine",
                                       "--threshold", "1.0", "--output-format", "ids",
                                       "-o", str(out), "--verbose"])
    assert result.exit_code == 0, result.output
    scores = np.array([float(line.split("\t")[0]) for line in out.read_text().splitlines()])
    assert len(scores) > 20
    line, = [line for line in result.stderr.splitlines() if "scores of" in line]
    count, = __import__("re").findall(r"scores of (\d+) pairs", line)
    assert int(count) == len(scores)
    printed = dict(item.split() for item in line.split(": ", 1)[1].split(", "))
    expected = {"min": scores.min(), "max": scores.max(),
                **{f"p{p}": np.percentile(scores, p) for p in (5, 25, 50, 75, 95)}}
    assert printed.keys() == expected.keys()
    for name, value in expected.items():
        assert abs(float(printed[name]) - value) <= 5e-5, name
    quiet = CliRunner().invoke(main, ["mine", src_txt, trg_txt, "--src-embeddings", src_npy,
                                      "--trg-embeddings", trg_npy, "--mode", "mine",
                                      "-o", str(tmp_path / "quiet.tsv")])
    assert quiet.exit_code == 0 and "scores of" not in quiet.stderr
