"""laser.text.sentences.split_sentences: abbreviations, numbers and dates that do not end a
sentence, quotes and brackets, CJK without spaces, the scripts that write few full stops, blank
texts, and the text of every sentence kept exactly."""
import pytest

import laser
from laser.text.languages import UnknownLanguage
from laser.text.sentences import split_sentences
from laser.text.splitting.paragraphs import Paragraph, joined, paragraphs

from conftest import ROOT

UNPUNCTUATED = ROOT / "tests/data/splitting/unpunctuated-dev.tsv"


@pytest.mark.parametrize("text, lang, sentences", [
    ("Dr. Smith came at 5 p.m. today. He left!  Did he?", "en",
     ["Dr. Smith came at 5 p.m. today.", "He left!", "Did he?"]),
    ("Mr. Brown paid 3.14 dollars. Then he went home.", "eng",
     ["Mr. Brown paid 3.14 dollars.", "Then he went home."]),
    ("She moved to the U.S. in 1990. It rained.", "en",
     ["She moved to the U.S. in 1990.", "It rained."]),
    ("We met on Jan. 5 at noon. It rained.", "en", ["We met on Jan. 5 at noon.", "It rained."]),
    ("Am 3. Oktober 1990 kam er, z. B. mit Anna. Dann ging er.", "deu",
     ["Am 3. Oktober 1990 kam er, z. B. mit Anna.", "Dann ging er."]),
    ("Il est arrivé. M. Dupont est parti.", "fr", ["Il est arrivé.", "M. Dupont est parti."]),
    ("Bir. İki.", "kaz", ["Bir.", "İki."]),
])
def test_abbreviations_numbers_and_dates_do_not_end_a_sentence(text, lang, sentences):
    assert split_sentences(text, lang) == sentences


@pytest.mark.parametrize("text, lang, sentences", [
    ('He said "Go home." Then he left.', "en", ['He said "Go home."', "Then he left."]),
    ("(It was late.) We left.", "en", ["(It was late.)", "We left."]),
    ("«Tu viens ?» Il a dit oui.", "fr", ["«Tu viens ?»", "Il a dit oui."]),
    ("¿Vienes? ¡Sí! Vamos.", "es", ["¿Vienes?", "¡Sí!", "Vamos."]),
])
def test_closing_quotes_and_brackets_stay_with_their_sentence(text, lang, sentences):
    assert split_sentences(text, lang) == sentences


@pytest.mark.parametrize("text, lang, sentences", [
    ("我喜欢猫。你呢？他走了！", "zh", ["我喜欢猫。", "你呢？", "他走了！"]),
    ("今日は晴れです。明日は雨でしょう。", "ja", ["今日は晴れです。", "明日は雨でしょう。"]),
    ("「行こう。」と彼は言った。雨だった。", "jpn", ["「行こう。」と彼は言った。", "雨だった。"]),
])
def test_chinese_and_japanese_are_split_without_spaces(text, lang, sentences):
    assert split_sentences(text, lang) == sentences


def _boundary_f1(found: list[Paragraph], lang: str) -> float:
    hits = predicted = true = 0
    for paragraph in found:
        cuts, position = set(), 0
        for sentence in split_sentences(paragraph.text, lang):
            position = paragraph.text.index(sentence, position)
            cuts.add(position)
            position += len(sentence)
        cuts.discard(0)
        truth = {start for _, start in paragraph.boundaries}
        hits, predicted, true = hits + len(cuts & truth), predicted + len(cuts), true + len(truth)
    return 2 * hits / (predicted + true)


def _held_out(lang: str) -> list[str]:
    rows = UNPUNCTUATED.read_text(encoding="utf-8").splitlines()
    return [row.split("\t", 1)[1] for row in rows if row.startswith(lang + "\t")]


@pytest.mark.parametrize("lang, least", [("tha", 0.5), ("khm", 0.8), ("lao", 0.8), ("mya", 0.75)])
def test_scripts_with_few_full_stops_are_split(lang, least):
    """Paragraphs of held-out sentences (the corpus dev split): Thai writes no full stops, a
    space ends its sentences; Khmer, Lao and Burmese ones are found with their stops and
    without them."""
    sentences = _held_out(lang)
    assert _boundary_f1(list(paragraphs(sentences, "th", 1)), lang) >= least
    bare = [sentence.rstrip("។៕။.") for sentence in sentences]
    assert _boundary_f1(list(paragraphs(bare, "th", 1)), lang) >= (least if lang == "tha" else 0.5)


def test_a_blank_text_has_no_sentence_and_a_line_break_ends_one():
    assert split_sentences("", "en") == [] and split_sentences(" \n\t ", "en") == []
    assert split_sentences("First line without a stop\n\nSecond one. Third.\n", "en") == [
        "First line without a stop", "Second one.", "Third."]


def test_sentences_keep_the_text_but_the_spaces_between_them():
    text = "  Wait!  What?! \t“Yes.” (It was late.)  We left  "
    found = split_sentences(text, "en")
    assert found == ["Wait!", "What?!", "“Yes.”", "(It was late.)", "We left"]
    position = 0
    for sentence in found:
        position = text.index(sentence, position) + len(sentence)
    assert "".join(text.split()) == "".join(found).replace(" ", "")


def test_paragraphs_record_where_each_sentence_starts():
    assert joined(["A b.", " C d. "], " ") == Paragraph("A b. C d.", frozenset({(4, 5)}))
    assert joined(["甲。", "乙。"], "") == Paragraph("甲。乙。", frozenset({(2, 2)}))


def test_a_language_nobody_knows_is_refused_and_the_api_is_at_the_top():
    with pytest.raises(UnknownLanguage, match="xxq: unknown language"):
        split_sentences("A b. C d.", "xxq")
    assert laser.split_sentences is split_sentences
