"""The script decides first: a line gets only labels of its main script, the only label of a
script that has one, and `und` without letters; the same in `laser lid`, `laser.identify` and
the language filter; the kernel's table of scripts is the one Python's Unicode database gives."""
from __future__ import annotations

import unicodedata

import pytest

import laser
from laser.lid import script_table
from laser.lid.check import LanguagePair
from laser.lid.model import LanguageIdentifier, read_labels, shipped_model_path
from laser.lid.scripts import label_script, line_script, unicode_ranges

from conftest import DATA, laser_ok

LID = DATA / "lid"
TOY_MODEL = LID / "toy-lid.ftz"
HAN = ("Hans", "Hant", "Jpan")  # what a line of Han letters alone may be
LETTERLESS = [
    "42", "2024", "3.14159", "-17", "1,000,000", "2024-05-01", "01/02/2024", "12:30", "+33 1 23 45",
    "😀", "🎉👍🏽", "🇫🇷", "❤️", ":-)", ";)", "<3", "!!!", "...", "?!", "—",
    "#", "$100", "100%", "§ 3", "№ 5", "https://example.com/page?id=3",
    "www.example.org", "someone@example.com", "https://a.b/c 42 :-)", "", "   ",
]


def script_words() -> list[tuple[str, str]]:
    """(label, word) of tests/data/lid/script-words.tsv: one-script words of every label."""
    rows = (LID / "script-words.tsv").read_text(encoding="utf-8").splitlines()
    return [tuple(row.split("\t")) for row in rows]


def allowed_scripts(label: str, word: str) -> tuple[str, ...]:
    """The label scripts a word of `label`'s language may get: its own, or with Han letters
    alone those of Chinese and Japanese."""
    script = label_script(label)
    if script in HAN and line_script(word) == "Hani":
        return HAN
    return (script,)


def test_the_words_cover_every_script_and_label_of_the_shipped_model():
    labels = read_labels(shipped_model_path())
    assert {label for label, _ in script_words()} == set(labels)


def test_no_answer_crosses_scripts_over_one_script_words_of_every_script():
    words = script_words()
    found = laser.identify([word for _, word in words], top=5)
    crossed = [(word, guess.code) for (label, word), guesses in zip(words, found)
               for guess in guesses if label_script(guess.code) not in allowed_scripts(label, word)]
    assert crossed == []
    assert all(guesses[0].code != "und" for guesses in found)  # each word is answered


def test_a_script_of_one_label_is_answered_without_the_model():
    model = LanguageIdentifier(shipped_model_path())
    only = [label for label in model.labels
            if sum(label_script(other) == label_script(label) for other in model.labels) == 1]
    assert {"tha_Thai", "kat_Geor", "hye_Armn", "kor_Hang"} <= set(only)
    words = [word for label, word in script_words() if label in only]
    for (code, probability), word in zip(
            [(line[0].code, line[0].probability) for line in model.identify(words, top=3)], words):
        assert probability == 1.0 and label_script(code) == line_script(word)
    assert [[(guess.code, guess.probability) for guess in line]
            for line in model.identify(["สวัสดีครับ", "გამარჯობა"], top=3)] \
        == [[("tha_Thai", 1.0)], [("kat_Geor", 1.0)]]


@pytest.mark.parametrize("line", LETTERLESS)
def test_a_line_without_letters_is_und(line):
    assert [(guess.code, guess.probability) for guess in laser.identify([line], top=3)[0]] \
        == [("und", 0.0)]


def test_laser_lid_answers_und_for_every_letterless_line(tmp_path):
    source = tmp_path / "letterless.txt"
    source.write_text("\n".join(line for line in LETTERLESS) + "\n", encoding="utf-8")
    for model in ([], ["--lid-model", TOY_MODEL]):
        rows = laser_ok("lid", source, "-q", "--top", "2", *model).stdout.splitlines()
        assert rows == ["und\t0.0000"] * len(LETTERLESS)


def test_a_new_users_words_get_latin_labels_and_numbers_und():
    words = ["Danke", "Gracias", "Sí", "ok", "Merci"]
    found = laser.identify(words + ["42", "2024", ":-)"], top=3)
    assert all(label_script(guess.code) == "Latn" for line in found[:5] for guess in line)
    assert [line[0].code for line in found[5:]] == ["und"] * 3


@pytest.mark.parametrize("line, script", [
    ("Bonjour à tous", "Latn"), ("Привет всем", "Cyrl"), ("你好", "Hani"),
    ("私は学生です", "Jpan"), ("東京大学に行きました", "Jpan"), ("안녕하세요", "Hang"),
    ("한국 漢字漢字漢字", "Hang"), ("123 !?", None), ("Γειά σου", "Grek"), ("ＡＢＣ", "Latn"),
    ("ｶﾀｶﾅ", "Jpan"), ("I visited Москва last year", "Latn"),
    ("Johnny English Strikes Again մասին․ Լրտես Ռովան", "Armn"), ("αβ вг", "Grek"), ("ab вг", "Cyrl"),
    ("see https://www.example.com/ภาษาไทย and www.thai.th ภาษาไทย", "Thai"),
    ("write to мой@адрес.рф please", "Latn"), ("\u0301\u0301", None),
])
def test_the_main_script_of_a_line(line, script):
    """Most letters; Han joins kana, else Hangul; Latin weighs half beside another script; a
    tie goes to the script met first; addresses do not count."""
    assert line_script(line) == script


def test_mixed_lines_get_labels_of_their_main_script():
    found = laser.identify(["私は東京大学の学生です。", "저는 大學生 입니다", "Tom 太胆小了以至于做不了任何事"],
                           top=3)
    assert [line[0].code for line in found] == ["jpn_Jpan", "kor_Hang", "zho_Hans"]
    assert all(label_script(guess.code) in HAN for guess in found[2])


def test_the_language_filter_drops_pairs_without_letters():
    pair = LanguagePair.of("fr", "en")
    assert pair.matches(["Le chat dort sur le canapé.", "2024"],
                        ["The cat sleeps on the sofa.", "2024"]) == [True, False]


def test_the_kernels_script_table_is_pythons_unicode_database():
    assert script_table.UNICODE_VERSION == unicodedata.unidata_version
    assert list(script_table.RANGES) == unicode_ranges()
