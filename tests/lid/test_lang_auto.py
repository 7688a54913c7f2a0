"""`lang="auto"`: each line preprocessed as its identified language, rows in input order, equal to
embedding each line with its language named."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from laser import Encoder, LaserError
from laser.apps.documents import embed_documents
from laser.lid.model import LanguageIdentifier

from conftest import laser_ok, one_error_line, run_laser

MIXED = [
    ("Le chat dort sur le canapé depuis ce matin.", "fr"),
    ("我们明天早上去北京看朋友。", "zh"),
    ("私は毎朝コーヒーを飲みます。", "ja"),
    ("Η γάτα κοιμάται στον καναπέ από το πρωί.", "el"),
    ("The cat has been sleeping on the sofa since this morning.", "en"),
    ("Ο καιρός είναι πολύ ωραίος σήμερα.", "el"),
    ("Nous partons en vacances la semaine prochaine.", "fr"),
    ("", "en"),
]


@pytest.fixture(scope="module")
def shipped():
    return Encoder.load()


def test_auto_equals_each_line_embedded_in_its_language(shipped):
    lines = [line for line, _ in MIXED]
    named = np.stack([shipped.encode(line, lang) for line, lang in MIXED])
    np.testing.assert_array_equal(shipped.encode(lines, "auto"), named)
    np.testing.assert_array_equal(shipped.encode(lines, [lang for _, lang in MIXED]), named)


def test_auto_differs_from_one_language_for_all(shipped):
    lines = [line for line, _ in MIXED[:3]]
    assert not np.array_equal(shipped.encode(lines, "auto"), shipped.encode(lines, "en"))


def test_one_language_per_sentence_must_match_the_sentences(shipped):
    with pytest.raises(LaserError, match="2 languages for 3 sentences"):
        shipped.encode(["a", "b", "c"], ["en", "fr"])


def test_embed_lang_auto_equals_the_per_language_embeds_and_writes_the_languages(tmp_path,
                                                                               shipped):
    source = tmp_path / "mixed.txt"
    source.write_text("".join(line + "\n" for line, _ in MIXED), encoding="utf-8")
    out, langs = tmp_path / "mixed.npy", tmp_path / "mixed.lang"
    laser_ok("embed", source, "-o", out, "--lang", "auto", "--lang-out", langs, "-q")
    named = np.stack([shipped.encode(line, lang) for line, lang in MIXED])
    np.testing.assert_array_equal(np.load(out), named)
    assert langs.read_text(encoding="utf-8").splitlines() == \
        laser_ok("lid", source, "-q").stdout.splitlines()
    sidecar = json.loads((tmp_path / "mixed.npy.json").read_text(encoding="utf-8"))
    assert (sidecar["lang"], sidecar["lid_model"]) == ("auto", "laser-lid.ftz")
    # the shipped model has a space of its own: no LASER3 encoder could share it
    codes = Counter(line.split("\t")[0] for line in langs.read_text(encoding="utf-8").splitlines())
    assert sidecar["languages"] == {code: {"lines": count, "model": "laser-default-v2"}
                                    for code, count in codes.items()}


def test_each_line_is_identified_once(tmp_path, monkeypatch):
    identified = []
    real = LanguageIdentifier.ranked

    def counting(self, lines, top=1):
        lines = list(lines)
        identified.extend(lines)
        return real(self, lines, top)
    monkeypatch.setattr(LanguageIdentifier, "ranked", counting)
    source = tmp_path / "mixed.txt"
    source.write_text("".join(line + "\n" for line, _ in MIXED), encoding="utf-8")
    laser_ok("embed", source, "-o", tmp_path / "mixed.npy", "--lang", "auto", "--lang-out",
             tmp_path / "mixed.lang", "-q")
    assert identified == [line for line, _ in MIXED]


def test_lang_out_of_standard_input(tmp_path):
    text = "".join(line + "\n" for line, _ in MIXED)
    langs = tmp_path / "mixed.lang"
    laser_ok("embed", "-", "-o", tmp_path / "out.npy", "--lang", "auto", "--lang-out", langs,
             "-q", input=text)
    assert langs.read_text(encoding="utf-8") == laser_ok("lid", "-", "-q", input=text).stdout


DOCUMENTS = [("Le chat dort. Il fait beau depuis ce matin.", "fr"),
             ("The cat sleeps. It has been sunny since this morning.", "en"),
             ("", "en"),
             ("Η γάτα κοιμάται. Ο καιρός είναι ωραίος.", "el")]


def test_documents_of_any_language_are_each_identified_and_split_as_it(tmp_path, shipped):
    source = tmp_path / "documents.txt"
    source.write_text("".join(text + "\n" for text, _ in DOCUMENTS), encoding="utf-8")
    out, langs = tmp_path / "documents.npy", tmp_path / "documents.lang"
    laser_ok("embed", source, "-o", out, "--lang", "auto", "--documents", "--lang-out", langs,
             "-q")
    named = np.stack([embed_documents(shipped, text, lang) for text, lang in DOCUMENTS])
    np.testing.assert_array_equal(np.load(out), named)
    assert [line.split("\t")[0] for line in langs.read_text(encoding="utf-8").splitlines()] == \
        ["fra_Latn", "eng_Latn", "und", "ell_Grek"]


def test_lang_out_goes_with_lang_auto(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("Bonjour.\n", encoding="utf-8")
    line = one_error_line(run_laser("embed", source, "-o", tmp_path / "out.npy", "--lang", "fr",
                                    "--lang-out", tmp_path / "x.lang"))
    assert "--lang-out goes with --lang auto" in line
    assert not (tmp_path / "out.npy").exists()


LETTERLESS = ["2024-05-01", "12,5 %", "https://example.com/a-b?c=d", "42"]


@pytest.mark.parametrize("fallback", [None, "ja"])
def test_und_lines_are_embedded_as_the_fallback_language(tmp_path, shipped, fallback):
    """Lines without letters are `und`: embedded as --lang-fallback (English by default), whose
    preprocessing (MeCab for Japanese) gives them other rows than English's."""
    lines = [MIXED[0][0], *LETTERLESS, MIXED[3][0]]
    source = tmp_path / "mixed.txt"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "mixed.npy"
    laser_ok("embed", source, "-o", out, "--lang", "auto", "-q",
             *(["--lang-fallback", fallback] if fallback else []))
    rows = np.load(out)
    np.testing.assert_array_equal(rows[1:5], shipped.encode(LETTERLESS, fallback or "en"))
    np.testing.assert_array_equal(rows[[0, 5]], shipped.encode([lines[0], lines[5]], ["fr", "el"]))
    assert not np.array_equal(shipped.encode(LETTERLESS, "ja"), shipped.encode(LETTERLESS, "en"))
    sidecar = json.loads((tmp_path / "mixed.npy.json").read_text(encoding="utf-8"))
    assert sidecar["lang_fallback"] == (fallback or "en")
    assert sidecar["languages"]["und"] == {"lines": 4, "model": "laser-default-v2"}


def test_the_python_api_and_documents_take_the_fallback(shipped):
    japanese = Encoder.load(lang_fallback="ja")
    assert japanese.lang_fallback == "ja" and shipped.lang_fallback == "en"
    lines = ["Bonjour le monde.", *LETTERLESS]
    np.testing.assert_array_equal(japanese.encode(lines, "auto"),
                                  japanese.encode(lines, ["fr"] + ["ja"] * len(LETTERLESS)))
    np.testing.assert_array_equal(embed_documents(japanese, ["2024-05-01 12:30"], "auto"),
                                  embed_documents(shipped, ["2024-05-01 12:30"], "ja"))


@pytest.mark.parametrize("fallback, message", [("auto", "lang_fallback must be a language"),
                                               ("qqqx", "--lang-fallback")])
def test_a_bad_fallback_is_one_error(tmp_path, fallback, message):
    source = tmp_path / "in.txt"
    source.write_text("42\n", encoding="utf-8")
    line = one_error_line(run_laser("embed", source, "-o", tmp_path / "out.npy", "--lang",
                                    "auto", "--lang-fallback", fallback))
    assert message in line
    assert not (tmp_path / "out.npy").exists()
