"""`lang="auto"`: each line preprocessed as its identified language, rows in input order, equal to
embedding each line with its language named."""
from __future__ import annotations

import json

import numpy as np
import pytest

from laser import Encoder, LaserError

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


@pytest.mark.parametrize("options, message", [
    (["--lang", "fr", "--lang-out", "{tmp}/x.lang"], "--lang-out goes with --lang auto"),
    (["--lang", "auto", "--documents"], "--documents needs the documents' language"),
])
def test_embed_lang_auto_refuses_what_it_cannot_do(tmp_path, options, message):
    source = tmp_path / "in.txt"
    source.write_text("Bonjour.\n", encoding="utf-8")
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in options]
    line = one_error_line(run_laser("embed", source, "-o", tmp_path / "out.npy", *args))
    assert message in line
    assert not (tmp_path / "out.npy").exists()


def test_lang_out_needs_a_file_it_can_read_twice(tmp_path):
    result = run_laser("embed", "-", "-o", tmp_path / "out.npy", "--lang", "auto", "--lang-out",
                       tmp_path / "x.lang", input="Bonjour.\n")
    assert "give a file, not a pipe or '-'" in one_error_line(result)
