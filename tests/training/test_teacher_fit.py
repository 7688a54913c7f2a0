"""How closely a distilled run's student follows its teacher (`laser.training.teacher_fit` and
tasks/teacher_fit.py): the cosines agree with the same computation by hand from the run's files,
and runs that cannot be compared are refused with a one-line error."""
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from laser.errors import LaserError
from laser.encoder import Encoder
from laser.models.files import ModelFiles
from laser.training.config import BPEConfig, TrainConfig
from laser.training.corpus import find_pair_files
from laser.training.distill import TeacherTargets, english_sentences
from laser.training.run import train
from laser.training.teacher_fit import TeacherFit
from laser.training.teachers import cache_paths, make_teacher

from conftest import PARITY_MODEL, ROOT
from test_distill import HashingTeacher
from test_training import invoke, tiny_corpus  # noqa: F401  (the shared fixture)


def distilled_run(corpus, tmp_path, teacher: str = "hash"):
    config = TrainConfig(embed_dim=16, hidden_size=12, batch_size=8, steps=4, eval_every=4,
                         warmup=2, bow_steps=3, teacher=teacher)
    train(corpus, tmp_path / "model", tmp_path / "work", config, BPEConfig(merges=300),
          name="tiny", progress=False, teacher=HashingTeacher() if teacher else None,
          keep_last=True)
    return tmp_path / "work"


def test_cosines_are_the_heads_map_of_the_student_against_the_cached_targets(tiny_corpus,
                                                                              tmp_path):
    work = distilled_run(tiny_corpus, tmp_path)
    english = english_sentences(find_pair_files(tiny_corpus / "train"))[:6]
    cosines = TeacherFit(work, HashingTeacher()).cosines(english, "en")

    head = torch.nn.Linear(24, 32)
    head.load_state_dict({name.removeprefix("head."): value for name, value in
                          torch.load(work / "checkpoint.pt", weights_only=True)["head"].items()})
    targets = TeacherTargets(np.load(cache_paths("hash", work / "teacher")[0]))
    student = Encoder(ModelFiles.from_dir(tmp_path / "model")).encode(english, "en")
    with torch.no_grad():  # the cache's first rows are these sentences (code-point order)
        expected = F.cosine_similarity(head(torch.from_numpy(student)),
                                       targets(np.arange(len(english))), dim=1).numpy()
    assert cosines.shape == (6,) and np.all(np.abs(cosines) <= 1)
    np.testing.assert_allclose(cosines, expected, atol=2e-3)  # the model files are fp16


def test_another_teacher_an_undistilled_run_and_no_run_are_refused(tiny_corpus, tmp_path):
    work = distilled_run(tiny_corpus, tmp_path / "a")
    with pytest.raises(LaserError, match="distilled from hash, not other"):
        TeacherFit(work, HashingTeacher(name="other"))
    plain = distilled_run(tiny_corpus, tmp_path / "b", teacher="")
    with pytest.raises(LaserError, match="was not distilled"):
        TeacherFit(plain, HashingTeacher())
    with pytest.raises(LaserError, match="no checkpoint.pt"):
        TeacherFit(tmp_path / "missing", HashingTeacher())


def run_task(*arguments) -> subprocess.CompletedProcess:
    command = [sys.executable, str(ROOT / "tasks/teacher_fit.py"), *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True)


def test_task_reports_each_files_mean_cosine_and_names_a_blank_line(tiny_corpus, tmp_path):
    result = invoke(tiny_corpus, tmp_path / "work", tmp_path / "model", 4,
                    "--teacher", str(PARITY_MODEL))
    assert result.exit_code == 0, result.output
    sentences = ["The cat sleeps on the sofa.", "Where is the railway station?", "I like tea."]
    text = tmp_path / "english.txt"
    text.write_text("\n".join(sentences) + "\n", encoding="utf-8")

    report = run_task(tmp_path / "work", text)
    assert report.returncode == 0, report.stderr
    row = re.search(r"^\| .*english\.txt \| 3 \| (-?[\d.]+) \|", report.stdout, re.M)
    expected = TeacherFit(tmp_path / "work", make_teacher(str(PARITY_MODEL))).cosines(sentences,
                                                                                     "eng")
    assert row and float(row.group(1)) == pytest.approx(expected.mean(), abs=1e-3)

    text.write_text("One sentence.\n\nAnother.\n", encoding="utf-8")
    refused = run_task(tmp_path / "work", text)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: {text}:2: blank line; expected one sentence per line")
