"""tasks/sib200.py on a SIB-200 folder built from the vendored slice (English train and dev,
German dev): the shipped model, a distillation teacher with the same classifier, and the refusal
of both at once."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, ROOT

CHANCE = 100 / 7
DEV_IDS = 500  # the dev splits' first index id, after the 300 English train rows


@pytest.fixture(scope="module")
def sib_dir(tmp_path_factory) -> Path:
    """SIB_DIR/LANG/SPLIT.tsv with the header and index ids of the real files (ids below 997:
    every row counts as a FLORES dev row; the two dev splits are translations, row by row)."""
    root = tmp_path_factory.mktemp("sib200")
    for name in ("eng_Latn.train", "eng_Latn.dev", "deu_Latn.dev"):
        lang, split = name.split(".")
        rows = (DATA / "sib200" / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
        first_id = DEV_IDS if split == "dev" else 0
        (root / lang).mkdir(exist_ok=True)
        (root / lang / f"{split}.tsv").write_text(
            "index_id\tcategory\ttext\n"
            + "".join(f"{first_id + i}\t{row}\n" for i, row in enumerate(rows)),
            encoding="utf-8")
    return root


def run_task(sib_dir: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tasks/sib200.py"), str(sib_dir), *options],
                          capture_output=True, text=True)


def accuracies(report: str) -> tuple[float, float]:
    """(German dev accuracy, English dev accuracy) from the task's report."""
    german = re.search(r"^\| deu_Latn \| ([\d.]+) \|", report, re.M)
    english = re.search(r"English dev \(used for early stopping\): ([\d.]+)%", report)
    assert german and english, report
    return float(german.group(1)), float(english.group(1))


@pytest.fixture(scope="module")
def shipped(sib_dir) -> tuple[float, float]:
    result = run_task(sib_dir)
    assert result.returncode == 0, result.stderr
    assert "Mean zero-shot accuracy over 1 languages" in result.stdout
    assert "FLORES dev rows" in result.stdout and "FLORES devtest rows" not in result.stdout
    assert "retrieval" not in result.stdout
    return accuracies(result.stdout)


def test_the_shipped_model_transfers_topics_from_english_to_german(shipped):
    german, english = shipped
    assert 2 * CHANCE < german <= english <= 100


def test_retrieval_searches_the_german_rows_shared_with_english_both_ways(sib_dir):
    result = run_task(sib_dir, "--retrieval")
    assert result.returncode == 0, result.stderr
    found = re.search(r"retrieval error over the train and dev rows, the 1 languages pooled: "
                      r"FLORES dev rows ([\d.]+)% \((\d+) searches\)\.$", result.stdout, re.M)
    assert found, result.stdout
    error, searches = float(found.group(1)), int(found.group(2))
    assert searches == 2 * 99  # the dev rows; the English train rows have no German translation
    assert 0 < error < 25  # the shipped model finds most translations among 99 long sentences


@pytest.mark.teacher
def test_a_teacher_is_scored_with_the_same_classifier_and_beats_the_shipped_model(sib_dir, shipped):
    result = run_task(sib_dir, "--teacher", "use")
    assert result.returncode == 0, result.stderr
    assert "Model `teacher use`" in result.stdout
    german, english = accuracies(result.stdout)
    assert german > shipped[0] + 15 and english > shipped[1]


def test_a_model_and_a_teacher_together_are_refused(sib_dir):
    result = run_task(sib_dir, "--model", "default", "--teacher", "use")
    assert result.returncode == 2 and "not allowed with argument" in result.stderr
