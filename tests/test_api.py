"""The library's front door (docs/python-api.md): `laser.Encoder`, `laser.mine`, `laser.score`
and `laser.Index`, numpy in and numpy out, by the rules of the commands: sentences embedded with
the model their language picks, rows and embeddings files as they are, models of two spaces
refused; `dir(laser)` shows the public names only. The shipped default model embeds; the LASER2
parity fixture stands for a model of another space."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import laser
from laser.models.spaces import SpaceMismatch
from laser.search.vectors import unit_rows

from conftest import PARITY2_MODEL, laser_ok as ok

GERMAN = ["Das Buch liegt auf dem Tisch.", "Wo ist der Bahnhof?", "Ich trinke gern Tee.",
          "Der Zug fährt um acht Uhr ab."]
ENGLISH = ["The train leaves at eight o'clock.", "I like drinking tea.",
           "Where is the station?", "The book is on the table."]
PARTNER = [3, 2, 1, 0]  # GERMAN[i] translates ENGLISH[PARTNER[i]]


@pytest.fixture(scope="module")
def rows():
    encoder = laser.Encoder.load("default")
    return encoder.encode(GERMAN, "de"), encoder.encode(ENGLISH, "en")


def test_dir_shows_the_public_names_only():
    assert dir(laser) == sorted(laser.__all__)
    assert {"Encoder", "Index", "mine", "score", "LaserError"} <= set(dir(laser))
    assert not {"importlib", "sys", "errors", "version"} & set(dir(laser))


def test_mine_sentences_finds_the_translations_best_first(home):
    with pytest.warns(UserWarning, match="laser download laser2"):
        pairs = laser.mine(GERMAN, ENGLISH, "de", "en")
    assert sorted((pair.src, pair.trg) for pair in pairs) == list(enumerate(PARTNER))
    assert [pair.score for pair in pairs] == sorted((pair.score for pair in pairs), reverse=True)
    score, i, j = pairs[0]
    assert (score, i, j) == (pairs[0].score, pairs[0].src, pairs[0].trg)


def test_rows_mine_as_their_sentences_do_without_a_language(home, rows):
    by_rows = laser.mine(*rows)
    by_sentences = laser.mine(GERMAN, ENGLISH, "de", "en", src_model="default",
                              trg_model="default")
    assert [(p.src, p.trg) for p in by_rows] == [(p.src, p.trg) for p in by_sentences]
    np.testing.assert_allclose([p.score for p in by_rows], [p.score for p in by_sentences],
                               rtol=1e-5)


def test_the_options_of_laser_mine_apply(home, rows):
    forward = laser.mine(*rows, retrieval="fwd", margin="absolute", k=2)
    assert len(forward) == len(GERMAN)
    kept = laser.mine(*rows, threshold=10.0)
    assert kept == []
    with pytest.raises(laser.LaserError, match="unknown margin 'cubic'"):
        laser.mine(*rows, margin="cubic")


def test_embeddings_files_mine_with_their_sidecars(home, tmp_path):
    for name, lines, lang in (("de", GERMAN, "de"), ("en", ENGLISH, "en")):
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        ok("embed", tmp_path / f"{name}.txt", "-l", lang, "-o", tmp_path / f"{name}.npy", "-q")
    pairs = laser.mine(tmp_path / "de.npy", str(tmp_path / "en.npy"))
    assert sorted((pair.src, pair.trg) for pair in pairs) == list(enumerate(PARTNER))


def test_score_gives_one_score_per_aligned_pair(home, rows):
    german, english = rows
    aligned = english[PARTNER]
    cosines = laser.score(german, aligned, method="cosine")
    expected = (unit_rows(german) * unit_rows(aligned)).sum(axis=1)
    np.testing.assert_allclose(cosines, expected, rtol=1e-5)
    assert cosines.dtype == np.float32 and cosines.shape == (len(GERMAN),)
    margins = laser.score(GERMAN, [ENGLISH[j] for j in PARTNER], "de", "en")
    assert margins.shape == (len(GERMAN),) and (margins > 1).all()


def test_models_of_two_spaces_are_refused(home):
    with pytest.raises(SpaceMismatch, match=r"the de sentences \(encoder, space sha256:"):
        laser.mine(GERMAN, ENGLISH, "de", "en", src_model=str(PARITY2_MODEL))


def test_sentences_need_their_language(home, rows):
    with pytest.raises(laser.LaserError, match="the target side: sentences need their language"):
        laser.mine(rows[0], ENGLISH)
    with pytest.raises(laser.LaserError, match="expected a 2-d float array"):
        laser.score(rows[0][0], rows[1][0])


def test_an_index_built_saved_loaded_and_searched(home, rows, tmp_path):
    index = laser.Index.build(ENGLISH, lang="en")
    assert len(index) == len(ENGLISH) and index.origin.space == "laser-default-v2"
    index.save(tmp_path / "en.index")
    assert json.loads((tmp_path / "en.index.json").read_text())["model_name"] == \
        "laser-default-v2"
    loaded = laser.Index.load(tmp_path / "en.index")
    scores, ids = loaded.search(GERMAN, k=2, lang="de")
    assert scores.shape == ids.shape == (len(GERMAN), 2) and scores.dtype == np.float32
    assert ids[:, 0].tolist() == PARTNER
    assert (scores[:, 0] >= scores[:, 1]).all()
    by_rows = loaded.search(rows[0], k=2)
    np.testing.assert_array_equal(by_rows[1], ids)
    np.testing.assert_allclose(by_rows[0], scores, rtol=1e-5)


def test_an_index_of_rows_or_of_a_file_answers_as_the_cli_does(home, rows, tmp_path):
    (tmp_path / "en.txt").write_text("\n".join(ENGLISH) + "\n", encoding="utf-8")
    ok("embed", tmp_path / "en.txt", "-l", "en", "-o", tmp_path / "en.npy", "-q")
    ok("knn", "build", tmp_path / "en.npy", "-o", tmp_path / "cli.index", "-q")
    from_file = laser.Index.build(tmp_path / "en.npy")
    from_rows = laser.Index.build(rows[1], metric="ip")
    assert from_file.origin.space == "laser-default-v2" and not from_rows.origin.known
    cli = laser.Index.load(tmp_path / "cli.index")
    for index in (from_file, cli):
        np.testing.assert_array_equal(index.search(rows[0], k=1)[1].ravel(), PARTNER)
    assert from_rows.search(rows[0], k=1)[1].shape == (len(GERMAN), 1)


def test_an_index_refuses_queries_of_another_space(home, rows, tmp_path):
    index = laser.Index.build(ENGLISH, lang="en")
    with pytest.raises(SpaceMismatch, match=r"the index \(laser-default-v2, space "
                                            r"laser-default-v2\) and the queries"):
        index.search(GERMAN, lang="de", model=str(PARITY2_MODEL))
    (tmp_path / "de.txt").write_text("\n".join(GERMAN) + "\n", encoding="utf-8")
    ok("embed", tmp_path / "de.txt", "-l", "de", "-o", tmp_path / "de.npy", "-q")
    sidecar = tmp_path / "de.npy.json"
    sidecar.write_text(json.dumps(dict(json.loads(sidecar.read_text()), model_space="other",
                                       model_sha256="0" * 64)))  # another model's vectors
    with pytest.raises(SpaceMismatch, match="space other"):
        index.search(tmp_path / "de.npy")
    with pytest.raises(laser.LaserError, match="the index holds 576-d vectors but the queries "
                                               "are 3-d"):
        index.search(np.ones((2, 3), dtype=np.float32))


def test_the_model_choice_note_comes_once_a_process_at_the_callers_line(home, tmp_path):
    script = tmp_path / "use.py"
    script.write_text("import laser\n"
                      f"src, trg = {GERMAN!r}, {ENGLISH!r}\n"
                      "laser.mine(src, trg, 'de', 'en')\n"
                      "laser.mine(src, trg, 'de', 'en')\n"
                      "laser.score(src, trg, 'de', 'en')\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env={**os.environ, "LASER_HOME": str(home)})
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stderr.splitlines() if "ModelChoiceWarning" in line]
    assert len(notes) == 2 and len(set(notes)) == 2  # one for each language, once
    assert all(line.startswith(f"{script}:3: ModelChoiceWarning: using the shipped default "
                               "model") for line in notes)
