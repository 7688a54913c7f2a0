"""Language -> official model: the codes and names a user may pass, and the manifest's facts
(which languages have a LASER3 encoder, which of those their own SentencePiece model)."""
from __future__ import annotations

import importlib.util
import warnings

import pytest

from laser.errors import LaserError
from laser.models.languages import AmbiguousLanguage, language_table, official_model
from laser.models.registry import load_manifest
from laser.text.flores import flores_codes, flores_names
from laser.text.languages import resolve

from conftest import ROOT

# laser_encoders/language_list.py SPM_LANGUAGE: the LASER3 encoders with their own .spm/.cvocab.
OWN_SPM = ("amh_Ethi ayr_Latn azj_Latn bak_Cyrl bel_Cyrl bod_Tibt ckb_Arab crh_Latn dik_Latn "
           "dzo_Tibt fur_Latn fuv_Latn grn_Latn kab_Latn kac_Latn kaz_Cyrl kir_Cyrl kmr_Latn "
           "lij_Latn lim_Latn lmo_Latn ltg_Latn mya_Mymr pbt_Arab pes_Arab prs_Arab sat_Beng "
           "scn_Latn srd_Latn szl_Latn taq_Latn tgk_Cyrl tir_Ethi tzm_Tfng vec_Latn").split()


@pytest.mark.parametrize("lang, model", [
    ("ibo_Latn", "laser3-ibo_Latn"),   # FLORES-200 code
    ("IBO-latn", "laser3-ibo_Latn"),   # any case, either separator
    ("ig", "laser3-ibo_Latn"),         # ISO 639-1
    ("ibo", "laser3-ibo_Latn"),        # ISO 639-3
    ("igbo", "laser3-ibo_Latn"),       # English name, as laser_encoders
    ("Central Kurdish", "laser3-ckb_Arab"),
    ("fa", "laser3-pes_Arab"),         # a macrolanguage stands for its usual member
    ("per", "laser3-pes_Arab"),        # ISO 639-2/B
    ("amh_Ethi", "laser3-amh_Ethi"),   # in LASER2's list too: its own encoder wins
    ("de", "laser2"), ("ger", "laser2"), ("german", "laser2"), ("deu_Latn", "laser2"),
    ("zh", "laser2"), ("zh-Hant", "laser2"), ("ar", "laser2"),
    ("ace", "laser3-ace_Latn"),        # ace_Arab has no model: the one that has is meant
])
def test_languages_resolve_to_their_official_model(lang, model):
    assert official_model(lang) == model


def test_unknown_unserved_and_ambiguous_languages_are_one_line_errors():
    with pytest.raises(LaserError, match=r"^xx: unknown language \(an ISO 639 code, a FLORES-200 "
                                         r"code or an English name\); `laser models --languages` "
                                         r"lists the supported languages$"):
        official_model("xx")
    with pytest.raises(LaserError, match=r"^frnch: unknown language \(did you mean fra "
                                         r"\(French\)\?\)"):
        official_model("frnch")
    with pytest.raises(LaserError, match=r"^ang: no official LASER2 or LASER3 encoder covers it"):
        official_model("ang")  # Old English: an ISO 639-3 code outside FLORES-200
    with pytest.raises(LaserError, match=r"^norwegian nynorsk: no official LASER2 or LASER3 "
                                         r"encoder covers nno_Latn; pass a model \(e\.g\. "
                                         r"laser2\)"):
        official_model("norwegian nynorsk")
    with pytest.raises(AmbiguousLanguage, match=r"^kashmiri may mean kas_Arab \(kashmiri\), "
                                                r"kas_Deva \(kashmiri\); pass one of these codes$"):
        official_model("kashmiri")


def test_codes_and_names_map_to_flores_codes():
    assert flores_codes("en-US") == ["eng_Latn"]
    assert flores_codes("zh") == ["zho_Hans", "zho_Hant"]
    assert flores_codes("zh-Hans") == ["zho_Hans"]
    assert flores_codes("no") == ["nob_Latn"] and flores_codes("ms") == ["zsm_Latn"]
    # ISO 639-1's own codes of the two Norwegian standards, not only their macrolanguage's
    assert flores_codes("nb") == ["nob_Latn"] and flores_codes("nn-NO") == ["nno_Latn"]
    assert resolve("nb").moses == "nb" and resolve("nno").moses == "nn"
    assert flores_codes("luba-kasai") == ["lua_Latn"] and flores_codes("klingon") == []
    assert len(flores_names()) == 206


def test_english_names_get_their_language_rules_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve("igbo").moses == "ig" and resolve("Greek").romanize
        assert resolve("ibo_Latn").moses == "ig"


def test_manifest_facts_match_laser_encoders():
    models = load_manifest().models
    laser3 = {spec.languages[0]: spec for spec in models.values() if spec.family == "LASER3"}
    assert len(laser3) == 147 and all(len(spec.languages) == 1 for spec in laser3.values())
    assert all(spec.name == f"laser3-{code}" for code, spec in laser3.items())
    own = sorted(code for code, spec in laser3.items()
                 if spec.files[1].name == f"laser3-{code}.v1.spm")
    assert own == sorted(OWN_SPM)
    others = [spec for code, spec in laser3.items() if code not in OWN_SPM]
    assert all([f.name for f in spec.files[1:]] == ["laser2.spm", "laser2.cvocab"]
               for spec in others)
    assert len(models["laser2"].languages) == 91
    every = {code for spec in models.values() for code in spec.languages}
    assert every <= set(flores_names())


def test_the_table_has_every_language_with_its_model_and_spm():
    rows = {row.code: row for row in language_table()}
    assert len(rows) == 206 and sum(row.model is not None for row in rows.values()) == 199
    assert rows["amh_Ethi"].preprocessing == "SPMApply -l am, laser3-amh_Ethi.v1.spm"
    assert rows["ibo_Latn"].preprocessing == "SPMApply -l ig, laser2.spm"
    assert (rows["fra_Latn"].model, rows["fra_Latn"].spm) == ("laser2", "laser2.spm")
    assert rows["nno_Latn"].model is None and rows["nno_Latn"].preprocessing == "-"


def test_the_docs_table_is_current():
    spec = importlib.util.spec_from_file_location("language_table",
                                                  ROOT / "tasks" / "language_table.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = script.DOC.read_text(encoding="utf-8")
    assert script.with_table(text) == text, "run python tasks/language_table.py"
