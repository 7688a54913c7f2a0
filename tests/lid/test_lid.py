"""Language identification: the shipped model covers the corpus, `laser lid` and `laser.identify`
with it and with a user's fastText file (a tiny model trained by tasks/lid_model.py on the toy
corpus of tests/data/lid), and bad inputs."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import laser
from laser.lid.corpus import FLORES_CODE, label_of
from laser.lid.model import LanguageIdentifier, read_labels, shipped_model_path
from laser.lid.scripts import line_script

from conftest import DATA, laser_ok, one_error_line, run_laser

LID = DATA / "lid"
TOY_MODEL = LID / "toy-lid.ftz"
MIXED = {
    "Le chat dort sur le canapé depuis ce matin.": "fra_Latn",
    "我们明天早上去北京看朋友。": "zho_Hans",
    "私は毎朝コーヒーを飲みます。": "jpn_Jpan",
    "Η γάτα κοιμάται στον καναπέ από το πρωί.": "ell_Grek",
    "The cat has been sleeping on the sofa since this morning.": "eng_Latn",
    "Die Katze schläft seit heute Morgen auf dem Sofa.": "deu_Latn",
    "Я не знаю, что мне теперь делать.": "rus_Cyrl",
}


def toy_dev_lines() -> dict[str, list[str]]:
    """Label -> the foreign dev lines of the toy corpus."""
    lines: dict[str, list[str]] = {}
    for path in sorted((LID / "corpus" / "dev").glob("*.tsv.gz")):
        code = path.name.split("-")[0]
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for row in f:
                text = row.split("\t")[0]
                lines.setdefault(label_of(FLORES_CODE.get(code, code), text), []).append(text)
    return lines


def test_the_shipped_model_covers_every_corpus_language():
    corpus = (LID / "corpus-languages.txt").read_text(encoding="utf-8").split()
    assert len(corpus) == 259
    covered = {label.split("_")[0] for label in read_labels(shipped_model_path())}
    assert {FLORES_CODE.get(code, code) for code in corpus} <= covered


def test_the_shipped_model_names_the_mixed_lines():
    assert [guesses[0].code for guesses in laser.identify(list(MIXED))] == list(MIXED.values())


def test_identify_gives_codes_and_probabilities_likeliest_first():
    guesses = laser.identify(["Bonjour tout le monde.", "", "   "], top=3)
    assert [len(line) for line in guesses] == [3, 1, 1]
    assert guesses[0][0].code == "fra_Latn"
    probabilities = [guess.probability for guess in guesses[0]]
    assert probabilities == sorted(probabilities, reverse=True) and 0 < probabilities[0] <= 1
    assert [line[0].code for line in guesses[1:]] == ["und", "und"]


def test_a_user_model_reads_its_own_labels_and_names_the_toy_dev_lines():
    model = LanguageIdentifier(TOY_MODEL)
    assert sorted(model.labels) == ["deu_Latn", "ell_Grek", "eng_Latn", "fra_Latn", "jpn_Jpan",
                                    "rus_Cyrl", "zho_Hans"]
    for label, lines in toy_dev_lines().items():
        found = model.best(lines)
        assert sum(code == label for code in found) >= 0.9 * len(lines), (label, found)


def test_laser_lid_writes_one_line_per_input_line(tmp_path):
    source = tmp_path / "mixed.txt"
    source.write_text("\n".join(MIXED) + "\n\n", encoding="utf-8")
    result = laser_ok("lid", source, "--lid-model", TOY_MODEL, "-q")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [row[0] for row in rows] == [*MIXED.values(), "und"]
    assert all(len(row) == 2 and 0 <= float(row[1]) <= 1 for row in rows)


def test_laser_lid_top_k_from_stdin_into_a_file(tmp_path):
    out = tmp_path / "languages.tsv"
    result = laser_ok("lid", "-", "--top", "2", "-o", out, "--lid-model", TOY_MODEL,
                      input="Die Katze schläft auf dem Sofa.\nLe chat dort sur le canapé.")
    assert result.stdout == ""
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(row[0], len(row)) for row in rows] == [("deu_Latn", 4), ("fra_Latn", 4)]
    assert "identified 2 lines" in result.stderr


@pytest.mark.parametrize("content, message", [
    (b"bonjour\nsal\xffut\n", "bad.txt:2: invalid UTF-8"),
    (b"bonjour\nhello\x00\n", "bad.txt:2: contains a NUL byte"),
])
def test_bad_input_is_one_error_naming_the_line_and_leaves_no_output(tmp_path, content, message):
    source = tmp_path / "bad.txt"
    source.write_bytes(content)
    out = tmp_path / "out.tsv"
    line = one_error_line(run_laser("lid", source, "-o", out, "--lid-model", TOY_MODEL))
    assert str(source) in line and message in line
    assert not out.exists()


@pytest.mark.parametrize("content, message", [
    (None, "no such language-ID model file"),
    (b"not a model", "not a fastText model file"),
    (TOY_MODEL.read_bytes()[:300], "truncated"),
])
def test_a_bad_lid_model_is_one_error(tmp_path, content, message):
    model = tmp_path / "model.ftz"
    if content is not None:
        model.write_bytes(content)
    source = tmp_path / "in.txt"
    source.write_text("bonjour\n", encoding="utf-8")
    line = one_error_line(run_laser("lid", source, "--lid-model", model))
    assert str(model) in line and message in line


def test_a_missing_input_is_one_error(tmp_path):
    assert "no such file" in one_error_line(run_laser("lid", tmp_path / "missing.txt"))


@pytest.mark.parametrize("line, script", [
    ("Bonjour à tous", "Latn"), ("Привет всем", "Cyrl"), ("你好", "Hani"),
    ("私は学生です", "Jpan"), ("안녕하세요", "Hang"), ("123 !?", None), ("Γειά σου", "Grek"),
])
def test_line_script(line, script):
    assert line_script(line) == script
