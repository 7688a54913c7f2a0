"""Embedding spaces: declared by the manifest, a model's model.json or its own checkpoint;
recorded in sidecars and indexes; vectors of two spaces refused wherever they meet. The official
models are fixture models installed under their official names in a temporary $LASER_HOME."""
from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
# Imported here, so that the SWIG DeprecationWarnings pytest shows do not reach a command's stderr.
import sentencepiece  # noqa: F401

from laser.models.files import ModelFiles
from laser.models.registry import CHECKOUT_MODEL_DIR, load_manifest
from laser.models.spaces import (ModelIdentity, Origin, SpaceMismatch, check_same_space,
                                 model_identity, write_declaration)

from conftest import PARITY2_MODEL, run_laser as run, laser_ok as ok, one_error_line

SENTENCES = "Hello world.\nThe book is on the table!\nWhere is the station?\n"


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(SENTENCES, encoding="utf-8")
    return path


def sidecar(path) -> dict:
    return json.loads(path.with_name(path.name + ".json").read_text())


def test_the_manifest_puts_laser2_and_every_laser3_encoder_in_one_space():
    models = load_manifest().models.values()
    assert {spec.space for spec in models if spec.family in ("LASER2", "LASER3")} == {"laser2"}
    assert [spec.space for spec in models if spec.family == "LASER1"] == ["93langs"]


def test_official_models_share_their_declared_space_and_others_have_their_own(official_models,
                                                                             tmp_path):
    identity = {name: model_identity(ModelFiles.from_dir(directory))
                for name, directory in official_models.items()}
    assert {name: (found.name, found.space) for name, found in identity.items()} == {
        name: (name, "laser2") for name in official_models}
    default = model_identity(ModelFiles.from_dir(CHECKOUT_MODEL_DIR))
    fixture = model_identity(ModelFiles.from_dir(PARITY2_MODEL))
    assert (default.name, default.space) == ("laser-default-v2", "laser-default-v2")  # model.json
    assert fixture.space.startswith("sha256:") and fixture.name == "encoder"
    declared = shutil.copytree(PARITY2_MODEL, tmp_path / "student")
    write_declaration(declared, "my-student", "laser2")
    assert model_identity(ModelFiles.from_dir(declared)) == ModelIdentity("my-student", "laser2")


def test_embeddings_record_their_model_and_space(official_models, text, tmp_path):
    ok("embed", text, "-o", tmp_path / "ig.npy", "-l", "ig", "-q")
    ok("embed", text, "-o", tmp_path / "x.npy", "-l", "en", "--model", "default", "-q")
    assert (sidecar(tmp_path / "ig.npy")["model_name"],
            sidecar(tmp_path / "ig.npy")["model_space"]) == ("laser3-ibo_Latn", "laser2")
    assert sidecar(tmp_path / "x.npy")["model_space"] == "laser-default-v2"


def test_check_same_space_refuses_two_spaces_in_one_line_and_warns_on_unknown():
    laser2 = Origin("en.npy", "laser2", "laser2", "a" * 64)
    check_same_space(laser2, Origin("ig.npy", "laser3-ibo_Latn", "laser2", "b" * 64))
    with pytest.raises(SpaceMismatch, match=r"^en.npy \(laser2, space laser2\) and x.npy "
                                            r"\(my-model, space sha256:c+\) are "
                                            "not in one embedding space"):
        check_same_space(laser2, Origin("x.npy", "my-model", "sha256:" + "c" * 16))
    with pytest.raises(SpaceMismatch):  # records older than spaces: compared by checkpoint
        check_same_space(Origin("a", sha256="a" * 64), Origin("b", sha256="b" * 64))
    with pytest.warns(UserWarning, match="no sidecar records the model of raw.npy, so nothing "
                                         "checks that en.npy and raw.npy share"):
        check_same_space(laser2, Origin("raw.npy"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one file on both sides: the same vectors, nothing to say
        check_same_space(Origin("raw.npy"), Origin("raw.npy"))


def test_an_index_refuses_queries_of_another_model_and_takes_those_of_its_space(
        official_models, text, tmp_path):
    ok("knn", "build", text, "--lang", "en", "--model", "default", "-o", tmp_path / "v.index",
       "-q")
    index = json.loads((tmp_path / "v.index.json").read_text())
    assert index["model_name"] == "laser-default-v2"
    ok("embed", text, "-o", tmp_path / "q.npy", "-l", "en", "--model", "laser2", "-q")
    line = one_error_line(run("knn", "search", tmp_path / "v.index", tmp_path / "q.npy",
                              "-o", tmp_path / "out.tsv"))
    assert "v.index (laser-default-v2, space laser-default-v2)" in line
    assert "q.npy (laser2, space laser2) are not in one embedding space" in line
    assert not (tmp_path / "out.tsv").exists()
    # Amharic rows in the index, Igbo queries: two LASER3 encoders of one space.
    ok("knn", "build", text, "--lang", "am", "--model", "laser3-amh_Ethi", "-o",
       tmp_path / "am.index", "-q")
    assert json.loads((tmp_path / "am.index.json").read_text())["model_space"] == "laser2"
    ok("embed", text, "-o", tmp_path / "ig.npy", "-l", "ig", "-q")
    found = ok("knn", "search", tmp_path / "am.index", tmp_path / "ig.npy", "-k", 1)
    assert len(found.stdout.splitlines()) == 3 and not found.stderr


def test_mine_score_and_paraphrase_refuse_embeddings_of_two_spaces(official_models, text,
                                                                   tmp_path):
    ok("embed", text, "-o", tmp_path / "v.npy", "-l", "en", "--model", "default", "-q")
    ok("embed", text, "-o", tmp_path / "l2.npy", "-l", "en", "--model", "laser2", "-q")
    sides = [text, text, "--src-embeddings", tmp_path / "l2.npy", "--trg-embeddings",
             tmp_path / "v.npy", "-o", tmp_path / "out.tsv"]
    for command in ("mine", "score"):
        line = one_error_line(run(command, *sides))
        assert "l2.npy (laser2, space laser2) and " in line
        assert "v.npy (laser-default-v2, space laser-default-v2)" in line
        assert not (tmp_path / "out.tsv").exists()
    ok("knn", "build", text, "--lang", "en", "--model", "default", "-o", tmp_path / "v.index",
       "-q")
    line = one_error_line(run("paraphrase", tmp_path / "v.index", text, "--embeddings",
                              tmp_path / "l2.npy", "-o", tmp_path / "out.tsv"))
    assert "not in one embedding space" in line and "laser2" in line


def test_an_embeddings_file_without_sidecar_is_mined_with_a_warning(official_models, text,
                                                                    tmp_path):
    ok("embed", text, "-o", tmp_path / "ig.npy", "-l", "ig", "-q")
    np.save(tmp_path / "raw.npy", np.load(tmp_path / "ig.npy"))
    result = ok("mine", text, text, "--src-embeddings", tmp_path / "ig.npy", "--trg-embeddings",
                tmp_path / "raw.npy", "-o", "-", "-q")
    warning, = result.stderr.splitlines()
    assert warning.startswith("laser: warning: no sidecar records the model of ")
    assert warning.endswith("raw.npy share an embedding space")


def test_a_copy_of_a_model_without_its_model_json_is_in_its_space(text, tmp_path):
    """One checkpoint makes one set of vectors, whatever its directory declares."""
    copy = tmp_path / "my-copy"
    shutil.copytree(CHECKOUT_MODEL_DIR, copy)
    (copy / "model.json").unlink()
    ok("embed", text, "-o", tmp_path / "shipped.npy", "-l", "en", "--model", "default", "-q")
    ok("embed", text, "-o", tmp_path / "copy.npy", "-l", "en", "--model", copy, "-q")
    assert sidecar(tmp_path / "copy.npy")["model_space"].startswith("sha256:")
    ok("mine", text, text, "--src-embeddings", tmp_path / "shipped.npy", "--trg-embeddings",
       tmp_path / "copy.npy", "-o", tmp_path / "mined.tsv")
    assert len((tmp_path / "mined.tsv").read_text(encoding="utf-8").splitlines()) == 3


def test_a_model_that_declares_no_space_is_explained_with_the_fix(text, tmp_path):
    ok("embed", text, "-o", tmp_path / "shipped.npy", "-l", "en", "--model", "default", "-q")
    ok("embed", text, "-o", tmp_path / "other.npy", "-l", "en", "--model", PARITY2_MODEL, "-q")
    line = one_error_line(run("mine", text, text, "--src-embeddings", tmp_path / "shipped.npy",
                              "--trg-embeddings", tmp_path / "other.npy",
                              "-o", tmp_path / "mined.tsv"))
    assert "shipped.npy (laser-default-v2, space laser-default-v2) and " in line
    assert line.endswith(
        f"; {tmp_path / 'other.npy'}'s model declares no space (no model.json beside its "
        "checkpoint), so its space is its own, named after its checkpoint's sha256: if it was "
        'trained into the other\'s space, declare it in that model.json: {"name": "encoder", '
        '"space": "laser-default-v2"}')
