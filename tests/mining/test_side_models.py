"""A model per side: each side's language picks its official model (as `laser embed` does) when
both land in one embedding space, else the shipped default embeds both; --src-model/--trg-model
override; text against an index or embeddings file gets a model of their space. The official
models are fixture models installed under their official names in a temporary $LASER_HOME
(laser2: the LASER2 fixture; laser3-ibo_Latn, laser3-amh_Ethi: LASER3 fixtures A and B)."""
from __future__ import annotations

import json

import numpy as np
import pytest
# Imported here, so that the SWIG DeprecationWarnings pytest shows do not reach a command's stderr.
import sentencepiece  # noqa: F401

from laser.mining.sentences import mine_sentences, score_sentences
from laser.models.options import ModelOptions
from laser.models.registry import CHECKOUT_MODEL_DIR
from laser.models.resolve import ModelRequest, choose_models
from laser.models.spaces import SpaceMismatch

from conftest import LASER3_FIXTURES, install_official, run_laser as run, laser_ok as ok

SENTENCES = ["Hello world.", "The book is on the table!", "Where is the station?",
             "I like green tea.", "The train leaves at noon."]


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    return path


def chosen(src_lang, trg_lang, src_model=None, trg_model=None):
    choices = choose_models(ModelOptions(), [ModelRequest(src_model, lang=src_lang),
                                             ModelRequest(trg_model, lang=trg_lang)])
    return [choice.files.encoder.parent.name for choice in choices], [c.note for c in choices]


def test_each_side_gets_its_languages_official_model_in_one_space(official_models):
    assert chosen("ig", "en") == (["laser3-ibo_Latn", "laser2"], [None, None])
    assert chosen("ibo_Latn", "amh_Ethi") == (["laser3-ibo_Latn", "laser3-amh_Ethi"],
                                              [None, None])
    assert chosen("ig", "en", trg_model="laser3-amh_Ethi")[0] == ["laser3-ibo_Latn",
                                                                  "laser3-amh_Ethi"]


def test_without_one_space_by_language_the_default_embeds_both_sides(home):
    install_official("laser3-ibo_Latn", LASER3_FIXTURES / "A" / "laser3-A.pt")
    names, notes = chosen("ig", "en")
    assert names == [CHECKOUT_MODEL_DIR.name] * 2 and notes[1] is None
    assert notes[0] == ("using the shipped default model on both sides, since laser3-ibo_Latn "
                        "(ig) and laser-default-v2 (en) are not in one embedding space; "
                        "for the official LASER2 encoder of eng_Latn run: laser download laser2")


def test_a_side_that_names_its_model_puts_the_other_in_its_space(official_models):
    # English alone would pick laser2; against the shipped model the default fits.
    assert chosen("ig", "en", src_model="default")[0] == [CHECKOUT_MODEL_DIR.name] * 2
    assert chosen("ig", "am", trg_model="laser2")[0] == ["laser3-ibo_Latn", "laser2"]


def test_mine_embeds_each_side_with_its_encoder_shown_by_verbose(official_models, text,
                                                                 tmp_path):
    result = ok("mine", text, text, "--src-lang", "ig", "--trg-lang", "am", "--verbose",
                "-o", tmp_path / "mined.tsv")
    lines = result.stderr.splitlines()
    assert f" - {text}: laser3-ibo_Latn, space laser2" in lines
    assert f" - {text}: laser3-amh_Ethi, space laser2" in lines
    overridden = ok("mine", text, text, "--src-lang", "ig", "--trg-lang", "am", "--verbose",
                    "--src-model", "laser3-amh_Ethi", "-o", tmp_path / "same.tsv")
    assert overridden.stderr.count("laser3-amh_Ethi, space laser2") == 2


def test_models_of_two_spaces_named_per_side_are_refused_before_any_work(official_models, text,
                                                                         tmp_path):
    for command in ("mine", "score"):
        result = run(command, text, text, "--src-lang", "ig", "--trg-lang", "en",
                     "--src-model", "laser2", "--trg-model", "default",
                     "-o", tmp_path / "out.tsv")
        assert result.exit_code == 1
        line, = result.stderr.splitlines()
        assert "(laser2, space laser2) and " in line and "(laser-default-v2, " in line
        assert not (tmp_path / "out.tsv").exists()


def test_text_against_embeddings_is_embedded_in_their_space(official_models, text, tmp_path):
    ok("embed", text, "-o", tmp_path / "ig.npy", "-l", "ig", "-q")
    result = ok("mine", text, text, "--src-embeddings", tmp_path / "ig.npy", "--trg-lang", "am",
                "--verbose", "-o", tmp_path / "mined.tsv")
    assert f" - {text}: laser3-amh_Ethi, space laser2" in result.stderr.splitlines()


def test_knn_search_embeds_text_queries_with_a_model_of_the_index_space(official_models, text,
                                                                        tmp_path):
    # An index of the shipped model's space: Igbo queries are embedded with that model, not
    # with laser3-ibo_Latn, and find what the same model's embeddings find.
    ok("knn", "build", text, "--lang", "en", "--model", "default", "-o", tmp_path / "v.index",
       "-q")
    ok("embed", text, "-o", tmp_path / "q.npy", "-l", "ig", "--model", "default", "-q")
    by_text = ok("knn", "search", tmp_path / "v.index", text, "--lang", "ig", "-k", 2, "-q")
    by_rows = ok("knn", "search", tmp_path / "v.index", tmp_path / "q.npy", "-k", 2, "-q")
    assert by_text.stdout.splitlines() and not by_text.stderr
    assert [line.split("\t")[:4] for line in by_text.stdout.splitlines()] == \
        [line.split("\t")[:4] for line in by_rows.stdout.splitlines()]
    # An index of the laser2 space (Amharic rows: --lang picks laser3-amh_Ethi as `laser embed`
    # does): the Igbo queries get laser3-ibo_Latn.
    ok("knn", "build", text, "--lang", "am", "-o", tmp_path / "am.index", "-q")
    assert json.loads((tmp_path / "am.index.json").read_text())["model_name"] == "laser3-amh_Ethi"
    ok("embed", text, "-o", tmp_path / "ig.npy", "-l", "ig", "-q")
    assert json.loads((tmp_path / "ig.npy.json").read_text())["model_name"] == "laser3-ibo_Latn"
    by_text = ok("knn", "search", tmp_path / "am.index", text, "--lang", "ig", "-k", 2, "-q")
    by_rows = ok("knn", "search", tmp_path / "am.index", tmp_path / "ig.npy", "-k", 2, "-q")
    assert [line.split("\t")[:4] for line in by_text.stdout.splitlines()] == \
        [line.split("\t")[:4] for line in by_rows.stdout.splitlines()]


def test_the_python_api_mines_and_scores_two_lists_with_their_languages(official_models):
    mined = mine_sentences(SENTENCES, SENTENCES[::-1], "ig", "am")
    assert mined and all(src in SENTENCES and trg in SENTENCES for _, src, trg in mined)
    scores = score_sentences(SENTENCES, SENTENCES, "ig", "am", method="cosine")
    assert scores.shape == (len(SENTENCES),) and np.isfinite(scores).all()
    with pytest.raises(SpaceMismatch, match=r"the ig sentences \(laser2, space laser2\) and the "
                                            r"en sentences \(laser-default-v2"):
        score_sentences(SENTENCES, SENTENCES, "ig", "en", src_model="laser2",
                        trg_model="default")


def test_two_sides_of_one_model_share_one_loaded_encoder(official_models):
    from laser.cli.common import side_loaders
    from laser.models.options import ModelOptions
    from laser.search.inputs import EmbeddingSource
    model = ModelOptions()
    same = side_loaders(model, EmbeddingSource("a", None, "ig"),
                        EmbeddingSource("b", None, "ig"))
    assert same[0]() is same[1]()
    two = side_loaders(model, EmbeddingSource("a", None, "ig"), EmbeddingSource("b", None, "am"))
    assert two[0]() is not two[1]() and two[1]().files.encoder.parent.name == "laser3-amh_Ethi"


def test_the_python_api_embeds_each_side_with_its_own_model(official_models):
    """Scores are cosines of the source rows of the source language's model and the target rows
    of the target language's model (laser3-ibo_Latn and laser3-amh_Ethi differ), not the
    other way round."""
    from laser.encoder import Encoder
    from laser.mining.mine import MineOptions
    src, trg = SENTENCES, SENTENCES[1:] + SENTENCES[:1]

    def unit(rows):
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    x = unit(Encoder.load("laser3-ibo_Latn").encode(src, "ig"))
    y = unit(Encoder.load("laser3-amh_Ethi").encode(trg, "am"))
    swapped = unit(Encoder.load("laser3-amh_Ethi").encode(src, "ig"))
    assert np.abs((x * y).sum(axis=1) - (swapped * y).sum(axis=1)).max() > 1e-3
    scores = score_sentences(src, trg, "ig", "am", method="cosine")
    np.testing.assert_allclose(scores, (x * y).sum(axis=1), rtol=0, atol=1e-5)
    mined = mine_sentences(src, trg, "ig", "am", MineOptions(margin="absolute"))
    assert mined
    for score, source, target in mined:
        expected = x[src.index(source)] @ y[trg.index(target)]
        assert score == pytest.approx(expected, abs=1e-5)
