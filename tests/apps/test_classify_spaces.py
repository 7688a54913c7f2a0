"""Zero-shot across models of one space: a classifier records the embedding space it was trained
in, not one model file, so it classifies sentences any model of that space embeds (trained on
Amharic with laser3-amh_Ethi, predicting Igbo with laser3-ibo_Latn: fixture LASER3 encoders B and
A installed under those official names) and refuses the vectors of any other space."""
from __future__ import annotations

import json

# Imported here, so that the SWIG DeprecationWarnings pytest shows do not reach a command's stderr.
import sentencepiece  # noqa: F401
from click.testing import CliRunner

from laser.cli import main

from conftest import DATA

SIB = DATA / "sib200"


def run(*args):
    return CliRunner().invoke(main, ["classify", *[str(arg) for arg in args]])


def test_a_classifier_trained_with_one_model_predicts_with_another_of_its_space(official_models,
                                                                              tmp_path):
    lines = (SIB / "eng_Latn.train.tsv").read_text(encoding="utf-8").splitlines()[:60]
    train = tmp_path / "train.tsv"
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sentences = tmp_path / "ig.txt"
    sentences.write_text("".join(line.split("\t", 1)[1] + "\n" for line in lines[:5]),
                         encoding="utf-8")
    trained = run("train", train, "--lang", "am", "-o", tmp_path / "topics", "--epochs", 2, "-q")
    assert trained.exit_code == 0, trained.output
    record = json.loads((tmp_path / "topics" / "classifier.json").read_text())
    assert (record["model_name"], record["model_space"]) == ("laser3-amh_Ethi", "laser2")
    predicted = run("predict", tmp_path / "topics", sentences, "--lang", "ig", "-q")
    assert predicted.exit_code == 0, predicted.output
    assert len(predicted.stdout.splitlines()) == 5 and not predicted.stderr
    assert set(predicted.stdout.split()) <= {line.split("\t")[0] for line in lines}
    refused = run("predict", tmp_path / "topics", sentences, "--lang", "ig", "--model", "default")
    assert refused.exit_code == 1
    line, = refused.stderr.splitlines()
    assert "the classifier (laser3-amh_Ethi, space laser2) and " in line
    assert "(laser-default-v2, space laser-default-v2)" in line and "not in one embedding" in line
