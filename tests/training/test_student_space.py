"""A student distilled into its teacher's space, then mined against the teacher: `laser train
--init T --teacher T` at the teacher's width (no projection head) declares the teacher's space in
the student's model.json, so the student's vectors may meet the teacher's, and they find the
planted pairs: each sentence the student embeds, among shuffled teacher-embedded copies and
distractors. Without the declaration the same vectors are refused. The teacher is the vendored
LASER1 fixture model."""
from __future__ import annotations

import json
import random
import shutil

from click.testing import CliRunner

from laser.cli import main
from laser.models.files import ModelFiles
from laser.models.spaces import model_identity
from laser.training.corpus import find_pair_files, read_pairs

from conftest import PARITY_MODEL, laser_ok as ok
from test_training import tiny_corpus  # noqa: F401  (the shared fixture)


def test_a_student_distilled_into_its_teachers_space_mines_against_it(tiny_corpus, tmp_path):
    ok("train", tiny_corpus, "-o", tmp_path / "student", "--work-dir", tmp_path / "work",
       "--steps", 8, "--init", PARITY_MODEL, "--teacher", PARITY_MODEL, "--embed-dim", 48,
       "--hidden-size", 40, "--layers", 3, "--batch-size", 8, "--warmup", 2, "--lr", 1e-4,
       "--eval-every", 8, "--workers", 1, "--name", "student")
    teacher = model_identity(ModelFiles.from_dir(PARITY_MODEL))
    declared = json.loads((tmp_path / "student" / "model.json").read_text())
    assert declared == {"name": "student", "space": teacher.space}
    assert ModelFiles.from_dir(tmp_path / "student").sha256() != \
        ModelFiles.from_dir(PARITY_MODEL).sha256()

    english = sorted({e for _, e in read_pairs(find_pair_files(tiny_corpus / "train")[0].path)})
    planted, distractors = english[:10], english[10:30]
    targets = planted + distractors
    random.Random(0).shuffle(targets)
    (tmp_path / "src.txt").write_text("".join(s + "\n" for s in planted), encoding="utf-8")
    (tmp_path / "trg.txt").write_text("".join(s + "\n" for s in targets), encoding="utf-8")
    ok("embed", tmp_path / "src.txt", "-l", "en", "--model", tmp_path / "student",
       "-o", tmp_path / "src.npy", "-q")
    ok("embed", tmp_path / "trg.txt", "-l", "en", "--model", PARITY_MODEL,
       "-o", tmp_path / "trg.npy", "-q")
    sides = [tmp_path / "src.txt", tmp_path / "trg.txt", "--src-embeddings", tmp_path / "src.npy",
             "--trg-embeddings", tmp_path / "trg.npy", "-o", "-"]
    mined = ok("mine", *sides).stdout.splitlines()
    assert sorted((src, trg) for _, src, trg in (line.split("\t") for line in mined)) == \
        sorted((s, s) for s in planted)

    shutil.copytree(tmp_path / "student", tmp_path / "undeclared")
    (tmp_path / "undeclared" / "model.json").unlink()
    ok("embed", tmp_path / "src.txt", "-l", "en", "--model", tmp_path / "undeclared",
       "-o", tmp_path / "src.npy", "-q")
    refused = CliRunner().invoke(main, ["mine", *map(str, sides)])
    assert refused.exit_code == 1 and "not in one embedding space" in refused.stderr
