"""The cleaning stage's sentence steps (laser.cleaning.filters): normalisation and each filter,
in order, on sentences chosen to pass or fail each one."""
import pytest

from laser.cleaning.filters import (CleaningOptions, digits_punctuation_share, first_filter,
                                    language_kept, language_scripts, normalize, script_share)
from laser.errors import LaserError


def test_normalize_composes_and_turns_controls_and_runs_of_spaces_into_one_space():
    assert normalize("  Cafe\u0301\tau\u00a0 lait\x00 ! ") == "Café au lait !"


@pytest.mark.parametrize("text, options, removed", [
    ("Court.", {}, "chars"),
    ("x" * 1001, {}, "chars"),
    ("Une phrase de longueur correcte.", {"min_words": 6}, "words"),
    ("Une phrase de longueur correcte.", {"max_words": 4}, "words"),
    ("Это предложение написано по-русски.", {}, "script"),
    ("12 345 678 910 !!! ---", {"min_script_share": 0}, "digits_punctuation"),
    ("Une phrase de longueur correcte.", {}, None),
    ("Le prix : 12,50 euros par personne.", {}, None),
])
def test_each_sentence_filter_removes_what_it_should(text, options, removed):
    assert first_filter(normalize(text), CleaningOptions("fr", **options)) == removed


def test_the_first_failing_filter_counts_a_sentence():
    assert first_filter("12 !", CleaningOptions("fr")) == "chars"


def test_the_script_share_counts_letters_of_the_language_script_only():
    latin = language_scripts("fr")
    assert script_share("Bonjour Москва", latin) == pytest.approx(7 / 13)
    assert script_share("1234 !", latin) == 0.0
    assert script_share("東京は日本の首都です。", language_scripts("ja")) == 1.0
    assert script_share("中文句子", language_scripts("zh")) == 1.0
    with pytest.raises(LaserError, match="no script known"):
        CleaningOptions("xx_unknown")
    assert CleaningOptions("xx_unknown", min_script_share=0).scripts == frozenset()


def test_digits_punctuation_and_symbols_share_of_the_visible_characters():
    assert digits_punctuation_share("ab 12") == pytest.approx(0.5)
    assert digits_punctuation_share("€€ ab") == pytest.approx(0.5)
    assert digits_punctuation_share("") == 0.0


def test_language_id_keeps_sentences_of_the_language_above_the_probability():
    texts = ["Les roses fleurissent au début de l'été dans notre jardin.",
             "The roses bloom at the beginning of summer in our garden."]
    assert language_kept(texts, CleaningOptions("fr")) == [True, False]
    assert language_kept(texts, CleaningOptions("en")) == [False, True]
    menu = ["Home | Shop | Contact"]  # English, with a calibrated probability near 0.85
    assert language_kept(menu, CleaningOptions("en", min_lid_prob=0.5)) == [True]
    assert language_kept(menu, CleaningOptions("en", min_lid_prob=0.95)) == [False]


@pytest.mark.parametrize("options, message", [
    ({"min_chars": 20, "max_chars": 10}, "--min-chars 20 is more than --max-chars 10"),
    ({"min_lid_prob": 1.5}, "--min-lid-prob must be between 0 and 1"),
])
def test_inconsistent_options_are_refused(options, message):
    with pytest.raises(LaserError, match=message):
        CleaningOptions("fr", **options)
