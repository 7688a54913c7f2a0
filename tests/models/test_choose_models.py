"""`choose_models`, rule by rule (laser/models/resolve.py, docs/models.md "How a model is
chosen"): one row per rule and per refusal. The official models are fixture models installed
under their official names in a temporary $LASER_HOME (laser2: the LASER2 fixture;
laser3-ibo_Latn, laser3-amh_Ethi: LASER3 fixtures A and B); the shipped default is the
checkout's."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pytest

from laser.errors import LaserError
from laser.models import registry
from laser.models.options import ModelOptions
from laser.models.registry import CHECKOUT_MODEL_DIR
from laser.models.resolve import ModelRequest, choose_models
from laser.models.spaces import Origin, SpaceMismatch
from laser.text.languages import UnknownLanguage

from conftest import LASER3_FIXTURES, PARITY2_MODEL, install_official

OFFICIAL = {"laser2": PARITY2_MODEL / "encoder.pt",
            "laser3-ibo_Latn": LASER3_FIXTURES / "A" / "laser3-A.pt",
            "laser3-amh_Ethi": LASER3_FIXTURES / "B" / "laser3-B.pt"}
EVERY = tuple(OFFICIAL)
PARITY2 = ModelOptions(encoder=str(PARITY2_MODEL / "encoder.pt"),
                       spm_model=str(PARITY2_MODEL / "encoder.spm"))
DEFAULT_SPACE = "laser-default-v2"
LASER2_VECTORS = Origin("laser2.npy", "laser2", "laser2", "0" * 64)
DEFAULT_VECTORS = Origin("default.npy", DEFAULT_SPACE, DEFAULT_SPACE, "1" * 64)
NO_SIDECAR = Origin("plain.npy")
IGBO_NOTE = ("using the shipped default model; for the official LASER3 encoder of ibo_Latn run: "
             "laser download laser3-ibo_Latn")


@dataclass(frozen=True)
class Row:
    """Installed official models, the options, $LASER_MODEL and the sides; then the model
    (directory name, `default` for the shipped one, None for none) and note each side gets, or
    the refusal (its exception and a part of its message)."""

    installed: tuple[str, ...]
    sides: tuple[ModelRequest, ...]
    models: tuple[Optional[str], ...] = ()
    notes: tuple[Optional[str], ...] = ()
    options: ModelOptions = ModelOptions()
    env: Optional[str] = None
    refused: tuple = field(default=())  # (exception class, part of the message)


ROWS = {
    # 1. an unknown language is refused, whatever the model
    "unknown language, even with a named model": Row(
        EVERY, (ModelRequest("laser2", "xx-nowhere"),),
        refused=(UnknownLanguage, "xx-nowhere: unknown language")),
    # 2. vectors that exist need no model
    "precomputed vectors get no model": Row(
        (), (ModelRequest(origin=LASER2_VECTORS),), (None,), (None,)),
    # 3. a named model: explicit files, the side's own, --model, $LASER_MODEL
    "explicit files": Row((), (ModelRequest(lang="ig"),), ("parity2",), (None,), PARITY2),
    "explicit files before the side's own model": Row(
        EVERY, (ModelRequest("laser2", "ig"),), ("parity2",), (None,), PARITY2),
    "the side's own model": Row(EVERY, (ModelRequest("laser2", "ig"),), ("laser2",), (None,)),
    "the side's own model before --model": Row(
        EVERY, (ModelRequest("laser2", "ig"),), ("laser2",), (None,),
        ModelOptions(model="default")),
    "--model": Row(EVERY, (ModelRequest(lang="ig"),), ("laser3-amh_Ethi",), (None,),
                   ModelOptions(model="laser3-amh_Ethi")),
    "--model before $LASER_MODEL": Row(
        EVERY, (ModelRequest(lang="ig"),), ("default",), (None,), ModelOptions(model="default"),
        env="laser2"),
    "$LASER_MODEL": Row(EVERY, (ModelRequest(lang="ig"),), ("laser2",), (None,), env="laser2"),
    # 4. the language's official model when downloaded, else the default with a note
    "the language's official model": Row(
        EVERY, (ModelRequest(lang="ig"),), ("laser3-ibo_Latn",), (None,)),
    "the default, naming the official model's download": Row(
        (), (ModelRequest(lang="ig"),), ("default",), (IGBO_NOTE,)),
    "the default, without a note for a language without an official model": Row(
        EVERY, (ModelRequest(lang="ang"),), ("default",), (None,)),
    "the default, naming the languages an ambiguous name means": Row(
        (), (ModelRequest(lang="kashmiri"),), ("default",),
        ("using the shipped default model; kashmiri may mean kas_Arab (kashmiri), kas_Deva "
         "(kashmiri); pass one of these codes",)),
    "no language: the default": Row(EVERY, (ModelRequest(),), ("default",), (None,)),
    # 5. against a space: an installed model of it
    "against vectors of the default's space": Row(
        EVERY, (ModelRequest(lang="ig"), ModelRequest(origin=DEFAULT_VECTORS)),
        ("default", None), (None, None)),
    "against vectors of laser2's space: the model it is named after": Row(
        EVERY, (ModelRequest(lang="ang"), ModelRequest(origin=LASER2_VECTORS)),
        ("laser2", None), (None, None)),
    "against a named model's space": Row(
        EVERY, (ModelRequest("default", "ig"), ModelRequest(lang="am")),
        ("default", "default"), (None, None)),
    "against a named model's space, the other way round": Row(
        EVERY, (ModelRequest(lang="ig"), ModelRequest("laser2", "am")),
        ("laser3-ibo_Latn", "laser2"), (None, None)),
    "in the space already: the note goes": Row(
        (), (ModelRequest(lang="ig"), ModelRequest(origin=DEFAULT_VECTORS)),
        ("default", None), (None, None)),
    "vectors without a sidecar set no space": Row(
        EVERY, (ModelRequest(lang="ig"), ModelRequest(origin=NO_SIDECAR)),
        ("laser3-ibo_Latn", None), (None, None)),
    # 6. languages alone choosing two spaces: the default on every side, one note
    "languages of one space keep their models": Row(
        EVERY, (ModelRequest(lang="ig"), ModelRequest(lang="am")),
        ("laser3-ibo_Latn", "laser3-amh_Ethi"), (None, None)),
    "languages of two spaces: the default on both": Row(
        ("laser3-ibo_Latn",), (ModelRequest(lang="ig"), ModelRequest(lang="en")),
        ("default", "default"),
        ("using the shipped default model on both sides, since laser3-ibo_Latn (ig) and "
         "laser-default-v2 (en) are not in one embedding space; for the official LASER2 "
         "encoder of eng_Latn run: laser download laser2", None)),
    # 7. models of two spaces are refused
    "two named models of two spaces": Row(
        EVERY, (ModelRequest("laser2", "ig", "ig.txt"), ModelRequest("default", "en", "en.txt")),
        refused=(SpaceMismatch, "ig.txt (laser2, space laser2) and en.txt (laser-default-v2")),
    "no installed model of the vectors' space": Row(
        (), (ModelRequest(lang="ang", source="ang.txt"), ModelRequest(origin=LASER2_VECTORS)),
        refused=(SpaceMismatch, "ang.txt (laser-default-v2, space laser-default-v2) and "
                                "laser2.npy (laser2, space laser2)")),
    "vectors of two spaces": Row(
        (), (ModelRequest(origin=DEFAULT_VECTORS), ModelRequest(origin=LASER2_VECTORS)),
        refused=(SpaceMismatch, "default.npy (laser-default-v2, space laser-default-v2) and "
                                "laser2.npy")),
    # refusals of a named model
    "a model name not downloaded": Row(
        (), (ModelRequest("laser2"),),
        refused=(LaserError, "laser2: model not downloaded; run `laser download laser2`")),
    "an unknown model name": Row(
        (), (ModelRequest("laser9"),),
        refused=(LaserError, "laser9: model directory not found, and not a known model name")),
    "explicit files, half of them": Row(
        (), (ModelRequest(),), options=ModelOptions(encoder=PARITY2.encoder),
        refused=(LaserError, "pass --encoder with either --bpe-codes")),
    "explicit files that do not go together": Row(
        (), (ModelRequest(),), options=ModelOptions(encoder=PARITY2.encoder,
                                                    spm_model=PARITY2.spm_model, bpe_vocab="v"),
        refused=(LaserError, "--bpe-vocab goes with --bpe-codes")),
}


def directory_name(choice, home) -> Optional[str]:
    if choice is None:
        return None
    directory = choice.files.encoder.parent
    return {CHECKOUT_MODEL_DIR: "default", PARITY2_MODEL: "parity2"}.get(
        directory, directory.relative_to(home).as_posix() if directory.is_relative_to(home)
        else str(directory))


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_choose_models(row, home, monkeypatch):
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (CHECKOUT_MODEL_DIR,))
    if row.env:
        monkeypatch.setenv("LASER_MODEL", row.env)
    for name in row.installed:
        install_official(name, OFFICIAL[name])
    if row.refused:
        error, message = row.refused
        with pytest.raises(error) as refusal:
            choose_models(row.options, row.sides)
        assert message in str(refusal.value)
        return
    choices = choose_models(row.options, row.sides)
    assert [directory_name(choice, home) for choice in choices] == list(row.models)
    assert [choice and choice.note for choice in choices] == list(row.notes)


def test_no_shipped_default_is_refused_when_the_choice_falls_to_it(home, monkeypatch):
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (home / "not-shipped",))
    with pytest.raises(LaserError, match="this installation ships no default model"):
        choose_models(ModelOptions(), [ModelRequest(lang="en")])


def test_the_chosen_model_knows_its_identity_and_space(home, official_models):
    choice, = choose_models(ModelOptions(), [ModelRequest(lang="ig")])
    assert (choice.name, choice.space) == ("laser3-ibo_Latn", "laser2")
    assert choice.origin("ig.txt") == Origin("ig.txt", "laser3-ibo_Latn", "laser2",
                                             choice.files.sha256())
