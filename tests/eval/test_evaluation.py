"""xsim error (pairs, N x N, Tatoeba folders) and BUCC F1 against plain re-statements."""
import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main
from laser.eval.bucc import best_threshold, bucc_evaluate, precision_recall
from laser.eval.xsim import xsim_errors, xsim_matrix
from laser.search.vectors import Vectors
from laser.mining.margins import MARGINS

from conftest import PARITY, ROOT, laser_ok, one_error_line, read_fixture_lines, run_laser


def aligned_sets(n, count, noise, seed, dim=32):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((n, dim))
    return [(base + noise * rng.standard_normal((n, dim))).astype(np.float32) for _ in range(count)]


def naive_error(x, y, kind, k):
    """Share of rows of x whose best candidate in y (margin over its k nearest) is not row i."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    sims = x.astype(np.float64) @ y.astype(np.float64).T
    fwd_mean = np.sort(sims, axis=1)[:, -k:].mean(axis=1)
    bwd_mean = np.sort(sims, axis=0)[-k:].mean(axis=0)
    wrong = 0
    for i in range(len(x)):
        candidates = np.argsort(-sims[i])[:k]
        mean = (fwd_mean[i] + bwd_mean[candidates]) / 2
        score = {"absolute": sims[i, candidates], "distance": sims[i, candidates] - mean,
                 "ratio": sims[i, candidates] / mean}[kind]
        wrong += candidates[np.argmax(score)] != i
    return wrong / len(x)


@pytest.mark.parametrize("kind", MARGINS)
def test_xsim_errors_match_naive_both_ways(kind):
    x, y = aligned_sets(200, 2, 1.1, seed=1)
    forward, backward = xsim_errors(Vectors(x), Vectors(y), kind, 4)
    assert forward == pytest.approx(naive_error(x, y, kind, 4))
    assert backward == pytest.approx(naive_error(y, x, kind, 4))
    assert 0.05 < forward < 0.9


def test_identical_target_texts_count_as_found():
    x, y = aligned_sets(4, 2, 0.0, seed=2)
    x[3], y[3] = x[1], y[1]
    texts = ["a", "b", "c", "b"]
    plain = xsim_errors(Vectors(x), Vectors(y), "absolute", 2)
    with_texts = xsim_errors(Vectors(x), Vectors(y), "absolute", 2, texts, texts)
    assert plain == (0.25, 0.25) and with_texts == (0.0, 0.0)


def test_matrix_holds_every_ordered_pair():
    sets = aligned_sets(150, 3, 1.0, seed=3)
    matrix = xsim_matrix([Vectors(s) for s in sets], "ratio", 4)
    assert np.isnan(np.diag(matrix)).all()
    for i in range(3):
        for j in range(3):
            if i != j:
                assert matrix[i, j] == pytest.approx(naive_error(sets[i], sets[j], "ratio", 4))


def official_bucc_optimize(candidate2score, gold):
    """BuccOptimize of the official tasks/bucc/bucc.py (the last candidate may be the best)."""
    items = sorted(candidate2score.items(), key=lambda x: -x[1])
    nextract = ncorrect = 0
    threshold, best_f1 = 0, 0
    for i in range(len(items)):
        nextract += 1
        if items[i][0] in gold:
            ncorrect += 1
        if ncorrect > 0:
            precision, recall = ncorrect / nextract, ncorrect / len(gold)
            f1 = 2 * precision * recall / (precision + recall)
            if f1 > best_f1:
                best_f1 = f1
                following = items[i + 1][1] if i + 1 < len(items) else items[i][1]
                threshold = (items[i][1] + following) / 2
    return threshold


@pytest.mark.parametrize("seed", range(5))
def test_threshold_is_the_official_choice(seed):
    rng = np.random.default_rng(seed)
    pairs = [(f"s{i}", f"t{rng.integers(50)}") for i in range(200)]
    scores = {pair: float(s) for pair, s in zip(pairs, rng.normal(1.0, 0.1, 200).round(3))}
    gold = {pair for pair in pairs if rng.random() < 0.4} | {("s999", "t999")}
    assert best_threshold(scores, gold) == official_bucc_optimize(scores, gold)


def test_threshold_after_the_last_candidate_and_scores():
    scores = {("a", "1"): 1.3, ("b", "2"): 1.2, ("c", "3"): 1.1}
    gold = set(scores)
    assert best_threshold(scores, gold) == 1.1
    result = precision_recall(scores, gold | {("d", "4")}, 1.15)
    assert (result.precision, result.recall) == (1.0, 0.5)
    assert result.f1 == pytest.approx(2 / 3)


def write_bucc_split(directory, embeddings, split, n_pairs, n_noise, seed):
    """A BUCC-layout split (de-en) of synthetic sentences with known parallel pairs."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((n_pairs, 32))
    noise = rng.uniform(0.2, 1.5, (n_pairs, 1))
    src = np.concatenate([base + 0.3 * rng.standard_normal(base.shape),
                          rng.standard_normal((n_noise, 32))])
    trg = np.concatenate([rng.standard_normal((n_noise, 32)),
                          base + noise * rng.standard_normal(base.shape)])
    src_order, trg_order = rng.permutation(len(src)), rng.permutation(len(trg))
    src_ids = [f"de-{seed}{i:06d}" for i in range(len(src))]
    trg_ids = [f"en-{seed}{i:06d}" for i in range(len(trg))]
    prefix = directory / "de-en"
    prefix.mkdir(exist_ok=True)
    for lang, ids, order, matrix in (("de", src_ids, src_order, src),
                                     ("en", trg_ids, trg_order, trg)):
        lines = [f"{ids[i]}\t{lang} sentence {seed}-{i}" for i in order]
        (prefix / f"de-en.{split}.{lang}").write_text("\n".join(lines) + "\n")
        np.save(embeddings / f"de-en.{split}.{lang}.npy", matrix[order].astype(np.float32))
    gold = {(src_ids[i], trg_ids[n_noise + i]) for i in range(n_pairs)}
    (prefix / f"de-en.{split}.gold").write_text("".join(f"{s}\t{t}\n" for s, t in sorted(gold)))
    return gold


@pytest.fixture
def bucc_dir(tmp_path):
    embeddings = tmp_path / "emb"
    embeddings.mkdir()
    write_bucc_split(tmp_path, embeddings, "training", 150, 250, seed=1)
    write_bucc_split(tmp_path, embeddings, "test", 120, 200, seed=2)
    return tmp_path, embeddings


def test_bucc_threshold_from_training_applied_to_test(bucc_dir):
    directory, embeddings = bucc_dir
    runner = CliRunner()
    result = runner.invoke(main, ["eval", "bucc", str(directory), "--pair", "de-en",
                                  "--embeddings-dir", str(embeddings), "--extracted",
                                  str(directory / "pairs.tsv")])
    assert result.exit_code == 0, result.output
    warned, = result.stderr.splitlines()  # raw files: said once that no space can be checked
    assert warned.startswith("laser: warning: no sidecar records the model of ")
    lines = dict(line.split("\t", 1) for line in result.stdout.splitlines())
    threshold = float(lines["threshold"])
    assert 0.9 < threshold < 1.3
    assert "F1" in lines["training"] and "F1" in lines["test"]
    f1 = float(lines["test"].split("F1 ")[1])
    assert f1 > 80
    extracted = {tuple(line.split("\t"))
                 for line in (directory / "pairs.tsv").read_text().splitlines()}
    gold = {tuple(line.split("\t")) for line in
            (directory / "de-en/de-en.test.gold").read_text().splitlines()}
    precision, recall = len(extracted & gold) / len(extracted), len(extracted & gold) / len(gold)
    assert f1 == pytest.approx(100 * 2 * precision * recall / (precision + recall), abs=0.01)


def test_bucc_report_matches_mining_then_official_optimisation(bucc_dir):
    directory, embeddings = bucc_dir
    result = CliRunner().invoke(main, ["mine", str(directory / "de-en/de-en.training.de"),
                                       str(directory / "de-en/de-en.training.en"), "--mode", "mine",
                                       "--unify", "--output-format", "ids", "-o", "-",
                                       "--src-embeddings",
                                       str(embeddings / "de-en.training.de.npy"),
                                       "--trg-embeddings",
                                       str(embeddings / "de-en.training.en.npy")])
    assert result.exit_code == 0, result.output
    src_ids = [line.split("\t")[0] for line in (directory / "de-en/de-en.training.de").open()]
    trg_ids = [line.split("\t")[0] for line in (directory / "de-en/de-en.training.en").open()]
    scores = {(src_ids[int(s)], trg_ids[int(t)]): float(v)
              for v, s, t in (line.split("\t") for line in result.stdout.splitlines())}
    gold = {tuple(line.split("\t")) for line in
            (directory / "de-en/de-en.training.gold").read_text().splitlines()}

    @contextmanager
    def precomputed(text, lang):
        path = embeddings / f"{Path(text).name}.npy"
        yield np.load(path), str(path)
    report = bucc_evaluate(str(directory), "de-en", precomputed)
    assert report.threshold == official_bucc_optimize(scores, gold)
    assert report.train == precision_recall(scores, gold, report.threshold)
    assert report.test is not None and report.test.f1 > 0.8


def write_tatoeba(directory, embeddings, lang, x, y, texts_x, texts_y):
    for name, matrix, texts in ((f"tatoeba.{lang}-eng.{lang}", x, texts_x),
                                (f"tatoeba.{lang}-eng.eng", y, texts_y)):
        (directory / name).write_text("".join(t + "\n" for t in texts))
        if embeddings:
            np.save(embeddings / f"{name}.npy", matrix)


def test_tatoeba_folder_errors_both_ways_via_task_script(tmp_path):
    embeddings = tmp_path / "emb"
    embeddings.mkdir()
    expected = {}
    for seed, lang in enumerate(["deu", "fra"]):
        x, y = aligned_sets(120, 2, 0.9 + 0.3 * seed, seed=10 + seed)
        texts = [f"{lang} {i}" for i in range(120)]
        write_tatoeba(tmp_path, embeddings, lang, x, y, texts, [f"eng {i}" for i in range(120)])
        expected[lang] = (naive_error(x, y, "absolute", 4), naive_error(y, x, "absolute", 4))
    (tmp_path / "tatoeba.xyz-eng.xyz").write_text("no English file: ignored\n")
    result = subprocess.run([sys.executable, str(ROOT / "tasks/xsim.py"), str(tmp_path),
                             "--embeddings-dir", str(embeddings), "--margin", "absolute"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["lang", "margin", "xxx->eng", "eng->xxx"]
    for lang, kind, forward, backward in rows[1:3]:
        assert kind == "absolute"
        assert float(forward) == pytest.approx(100 * expected[lang][0], abs=0.005)
        assert float(backward) == pytest.approx(100 * expected[lang][1], abs=0.005)
    assert rows[3][0] == "average"
    average = 50 * (expected["deu"][0] + expected["fra"][0])
    assert float(rows[3][2]) == pytest.approx(average, abs=0.01)


def test_bucc_task_script_runs_the_same_evaluation(bucc_dir):
    directory, embeddings = bucc_dir
    script = subprocess.run([sys.executable, str(ROOT / "tasks/bucc.py"), str(directory), "--pair",
                             "de-en", "--embeddings-dir", str(embeddings)],
                            capture_output=True, text=True, cwd=ROOT)
    assert script.returncode == 0, script.stderr
    command = CliRunner().invoke(main, ["eval", "bucc", str(directory), "--pair", "de-en",
                                        "--embeddings-dir", str(embeddings)])
    assert script.stdout == command.stdout


def test_tatoeba_refuses_precomputed_embeddings_of_two_spaces(tmp_path):
    """The German side embedded by the shipped model, the English side by the parity model."""
    embeddings = tmp_path / "emb"
    embeddings.mkdir()
    write_tatoeba(tmp_path, None, "deu", None, None, ["Guten Morgen.", "Danke."],
                  ["Good morning.", "Thanks."])
    for name, lang, model in (("tatoeba.deu-eng.deu", "de", "default"),
                              ("tatoeba.deu-eng.eng", "en", str(PARITY / "model"))):
        laser_ok("embed", tmp_path / name, "-o", embeddings / f"{name}.npy", "--lang", lang,
                 "--model", model, "-q")
    line = one_error_line(run_laser("eval", "tatoeba", tmp_path, "--embeddings-dir", embeddings))
    assert "tatoeba.deu-eng.deu.npy (laser-default-v2, space laser-default-v2)" in line
    assert "(encoder, space sha256:" in line and "not in one embedding space" in line


def test_tatoeba_embeds_on_the_fly_with_the_model(tmp_path):
    """German parity lines against an English side whose even lines are those German sentences
    (all but line 12 tokenise the same as en and de) and whose odd lines are unrelated English:
    the errors equal those computed from the official embeddings (about half, not 0)."""
    german = read_fixture_lines(PARITY / "inputs/de.txt")
    english = read_fixture_lines(PARITY / "inputs/en.txt")
    de_rows, en_rows = np.load(PARITY / "expected/de.npy"), np.load(PARITY / "expected/en.npy")
    copied = [i % 2 == 0 and i != 12 for i in range(len(german))]
    eng_texts = [german[i] if copied[i] else english[i] for i in range(len(german))]
    eng_rows = np.stack([de_rows[i] if copied[i] else en_rows[i] for i in range(len(german))])
    write_tatoeba(tmp_path, None, "deu", None, None, german, eng_texts)
    result = CliRunner().invoke(main, ["eval", "tatoeba", str(tmp_path), "--model",
                                       str(PARITY / "model"), "--margin", "ratio"])
    assert result.exit_code == 0, result.output
    forward = naive_error(de_rows, eng_rows, "ratio", 4)
    backward = naive_error(eng_rows, de_rows, "ratio", 4)
    assert 0.2 < forward < 0.8 and 0.2 < backward < 0.8
    lang, kind, *errors = result.output.splitlines()[1].split("\t")
    assert (lang, kind) == ("deu", "ratio")
    assert [float(e) for e in errors] == pytest.approx([100 * forward, 100 * backward], abs=0.005)


def test_cli_xsim_matrix_of_three_files(tmp_path):
    sets = aligned_sets(100, 3, 1.0, seed=4)
    paths = []
    for name, matrix in zip("abc", sets):
        np.save(tmp_path / f"{name}.npy", matrix)
        paths.append(str(tmp_path / f"{name}.npy"))
    result = CliRunner().invoke(main, ["eval", "xsim", *paths, "--names", "de,fr,en",
                                       "--margin", "ratio", "-k", "3"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "# xsim error (%), margin ratio, k=3: row searched in column"
    assert lines[1].split() == ["de", "fr", "en"]
    table = {row.split()[0]: row.split()[1:] for row in lines[2:5]}
    assert [table[name][i] for i, name in enumerate(["de", "fr", "en"])] == ["-", "-", "-"]
    assert float(table["fr"][2]) == pytest.approx(100 * naive_error(sets[1], sets[2], "ratio", 3),
                                                  abs=0.005)
    assert lines[5].startswith("average ")


def test_cli_xsim_refuses_files_of_two_embedding_spaces(tmp_path):
    for name, space in (("a", "laser2"), ("b", "laser2"), ("c", "sha256:" + "c" * 16)):
        np.save(tmp_path / f"{name}.npy", aligned_sets(10, 1, 0, 0)[0])
        (tmp_path / f"{name}.npy.json").write_text(json.dumps(
            {"model_name": name, "model_space": space, "model_sha256": name * 64}))
    paths = [str(tmp_path / f"{name}.npy") for name in "abc"]
    assert CliRunner().invoke(main, ["eval", "xsim", *paths[:2]]).exit_code == 0
    result = CliRunner().invoke(main, ["eval", "xsim", *paths])
    assert result.exit_code == 1
    assert ("are not in one embedding space, so their similarities mean nothing; use models of "
            "one space (docs/search-and-mining.md#embedding-spaces); ") in result.stderr
    assert result.stderr.strip().endswith('declare it in that model.json: '
                                          '{"name": "c", "space": "laser2"}')
    assert "a.npy (a, space laser2) and " in result.stderr and "c.npy (c, space sha256:" in \
        result.stderr


def test_cli_xsim_refuses_unaligned_files(tmp_path):
    np.save(tmp_path / "a.npy", aligned_sets(10, 1, 0, 0)[0])
    np.save(tmp_path / "b.npy", aligned_sets(11, 1, 0, 0)[0])
    result = CliRunner().invoke(main, ["eval", "xsim", str(tmp_path / "a.npy"),
                                       str(tmp_path / "b.npy")])
    assert result.exit_code == 1
    assert "holds 10 rows but" in result.output and "xsim needs aligned sets" in result.output
