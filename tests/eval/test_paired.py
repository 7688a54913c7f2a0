"""Per-query xsim misses and the paired (McNemar) comparison of two models built on them."""
import subprocess
import sys
from math import comb

import numpy as np
import pytest

from laser.errors import LaserError
from laser.eval.paired import PairedComparison, mcnemar_exact
from laser.eval.xsim import xsim_errors, xsim_misses
from laser.search.vectors import Vectors

from conftest import PARITY_MODEL, ROOT


def test_misses_are_the_rows_behind_the_error_rates():
    rng = np.random.default_rng(4)
    base = rng.standard_normal((120, 16))
    x, y = (base + 1.2 * rng.standard_normal(base.shape) for _ in range(2))
    forward, backward = xsim_misses(Vectors(x.astype(np.float32)), Vectors(y.astype(np.float32)))
    assert forward.dtype == bool and forward.shape == backward.shape == (120,)
    assert 0 < forward.sum() < 120
    rates = xsim_errors(Vectors(x.astype(np.float32)), Vectors(y.astype(np.float32)))
    assert rates == (forward.mean(), backward.mean())
    sims = (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (
        y / np.linalg.norm(y, axis=1, keepdims=True)).T
    assert np.array_equal(forward, sims.argmax(axis=1) != np.arange(120))
    assert np.array_equal(backward, sims.argmax(axis=0) != np.arange(120))


@pytest.mark.parametrize("b, c, expected", [
    (0, 0, 1.0),
    (0, 5, 2 / 32),
    (1, 9, 2 * (1 + 10) / 1024),
    (9, 1, 2 * (1 + 10) / 1024),
    (5, 5, 1.0),
    (40, 60, 2 * sum(comb(100, i) for i in range(41)) / 2 ** 100),
])
def test_exact_mcnemar_is_the_two_sided_binomial_tail(b, c, expected):
    assert mcnemar_exact(b, c) == pytest.approx(expected)


def test_paired_comparison_counts_the_disagreements():
    baseline = np.array([1, 1, 1, 0, 0, 0, 1, 0], bool)
    model = np.array([1, 0, 0, 0, 1, 0, 0, 0], bool)
    pair = PairedComparison.of(baseline, model)
    assert (pair.queries, pair.baseline_errors, pair.model_errors) == (8, 4, 2)
    assert (pair.only_baseline_wrong, pair.only_model_wrong) == (3, 1)
    assert (pair.baseline_error, pair.model_error) == (50.0, 25.0)
    assert pair.change == pytest.approx(-25.0)
    assert pair.p_value == pytest.approx(mcnemar_exact(3, 1)) and pair.p_value == 0.625


def test_a_real_gain_is_significant_and_noise_is_not():
    rng = np.random.default_rng(0)
    baseline = rng.random(2000) < 0.20
    better = baseline & (rng.random(2000) < 0.6)  # 40% of the misses fixed, nothing broken
    reshuffled = rng.permutation(baseline)  # the same error rate, other queries
    assert PairedComparison.of(baseline, better).p_value < 1e-6
    assert PairedComparison.of(baseline, reshuffled).p_value > 0.01


def test_both_models_must_answer_the_same_queries():
    with pytest.raises(LaserError, match="same queries"):
        PairedComparison.of(np.zeros(3, bool), np.zeros(4, bool))


def test_corpus_xsim_compares_a_model_with_a_baseline_per_language():
    """tasks/corpus_xsim.py --baseline: the parity model (untrained for these languages) against
    the shipped one on two vendored dev files: both columns are each model's own error."""
    script = [sys.executable, str(ROOT / "tasks/corpus_xsim.py"),
              str(ROOT / "tests/data/corpus/dev"), "--languages", "fra,spa"]
    compared = subprocess.run(script + ["--model", str(PARITY_MODEL), "--baseline", "default"],
                              capture_output=True, text=True, check=True).stdout
    alone = subprocess.run(script, capture_output=True, text=True, check=True).stdout
    shipped = {row[0]: (float(row[3]) + float(row[4])) / 2 for row in table_rows(alone)}
    rows = {row[0]: row for row in table_rows(compared) if len(row) == 7}
    assert set(rows) == {"fra", "spa"}
    for lang, row in rows.items():
        assert float(row[3]) == pytest.approx(shipped[lang], abs=0.006)
        assert float(row[4]) > 80 and float(row[5]) == pytest.approx(
            float(row[4]) - float(row[3]), abs=0.011) and float(row[6]) < 1e-6
    assert "0 languages better (0 at p < 0.05), 2 worse (2 at p < 0.05)." in compared
    assert "More than 2 points worse: 2 (2 at p < 0.05): " in compared


@pytest.mark.teacher
def test_corpus_xsim_scores_a_teacher_on_its_languages():
    """tasks/corpus_xsim.py --teacher use: USE reads both sides itself and is better than the
    shipped model on French and Spanish (4.4% and 1.9% against laser-default-v2's 6.05% and
    7.05%; v1's were about 7% and 11%)."""
    script = [sys.executable, str(ROOT / "tasks/corpus_xsim.py"),
              str(ROOT / "tests/data/corpus/dev"), "--languages", "fra,spa"]
    teacher = subprocess.run(script + ["--teacher", "use"], capture_output=True, text=True,
                             check=True).stdout
    shipped = subprocess.run(script, capture_output=True, text=True, check=True).stdout
    errors = {name: {row[0]: (float(row[3]) + float(row[4])) / 2 for row in table_rows(output)}
              for name, output in (("teacher", teacher), ("shipped", shipped))}
    assert set(errors["teacher"]) == {"fra", "spa"}
    for lang in ("fra", "spa"):
        assert errors["teacher"][lang] < 6 and errors["teacher"][lang] < errors["shipped"][lang] - 1


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of the data rows of every markdown table in `markdown`."""
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| lang")]
