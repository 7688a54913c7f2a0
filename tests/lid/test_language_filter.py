"""The language filter of mined pairs: `laser mine --lid-filter` drops the pairs whose sides are
not identified as --src-lang and --trg-lang, and counts them in the summary."""
from __future__ import annotations

import pytest

from laser.lid.check import LanguagePair, expected_languages
from laser.lid.model import LanguageIdentifier

from conftest import DATA, PARITY_MODEL, laser_ok, one_error_line, run_laser

TOY_MODEL = DATA / "lid" / "toy-lid.ftz"
FRENCH = ["Le chat dort sur le canapé.", "Il pleut depuis ce matin.",
          "Nous allons au marché demain.", "Elle lit un livre très long."]
ENGLISH = ["The cat sleeps on the sofa.", "It has been raining since this morning.",
           "We are going to the market tomorrow.", "She is reading a very long book."]
GERMAN = ["Die Katze schläft auf dem Sofa.", "Wir gehen morgen auf den Markt."]


def mined(tmp_path, *extra):
    """`laser mine` of French + German lines against English + the same German lines."""
    src, trg = tmp_path / "src.txt", tmp_path / "trg.txt"
    src.write_text("\n".join(FRENCH + GERMAN) + "\n", encoding="utf-8")
    trg.write_text("\n".join(ENGLISH + GERMAN) + "\n", encoding="utf-8")
    out = tmp_path / "mined.tsv"
    result = laser_ok("mine", src, trg, "--src-lang", "fr", "--trg-lang", "en", "--model",
                      PARITY_MODEL, "--mode", "mine", "-o", out, *extra)
    return [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()], result


def test_mine_lid_filter_drops_the_pairs_of_other_languages(tmp_path):
    every, _ = mined(tmp_path)
    kept, result = mined(tmp_path, "--lid-filter", "--lid-model", TOY_MODEL, "--verbose")
    toy = LanguageIdentifier(TOY_MODEL)
    expected = [row for row in every if toy.best([row[1], row[2]]) == ["fra_Latn", "eng_Latn"]]
    assert kept == expected
    assert any(row[1] in GERMAN for row in every) and not any(row[1] in GERMAN for row in kept)
    assert (f" - dropped {len(every) - len(kept)} pairs whose source or target is identified "
            "as another language (--lid-filter)") in result.stderr.splitlines()


@pytest.mark.parametrize("options, message", [
    (["--mode", "search"], "--lid-filter goes with --mode mine"),
    (["--trg-lang", "xx-nowhere"], "xx-nowhere"),
])
def test_mine_lid_filter_refuses_what_it_cannot_check(tmp_path, options, message):
    text = tmp_path / "in.txt"
    text.write_text("\n".join(FRENCH) + "\n", encoding="utf-8")
    args = ["mine", text, text, "--src-lang", "fr", "--trg-lang", "en", "--model", PARITY_MODEL,
            "-o", tmp_path / "out.tsv", "--lid-filter"]
    line = one_error_line(run_laser(*args, *options))
    assert message in line
    assert not (tmp_path / "out.tsv").exists()


@pytest.mark.parametrize("option", [["--lid-model", TOY_MODEL], ["--lid-min-prob", "0.5"]])
def test_a_lid_option_without_the_filter_is_refused(tmp_path, option):
    text = tmp_path / "in.txt"
    text.write_text("\n".join(FRENCH) + "\n", encoding="utf-8")
    line = one_error_line(run_laser("mine", text, text, "--src-lang", "fr", "--trg-lang", "fr",
                                    "--model", PARITY_MODEL, "-o", tmp_path / "out.tsv",
                                    *option))
    assert f"{option[0]} goes with --lid-filter" in line


def test_mine_lid_min_prob_drops_the_pairs_identified_less_surely(tmp_path):
    every, _ = mined(tmp_path, "--lid-filter", "--lid-model", TOY_MODEL)
    toy = LanguageIdentifier(TOY_MODEL)
    sure = [row for row in every
            if min(guesses[0].probability for guesses in toy.identify(row[1:3])) >= 0.999]
    kept, _ = mined(tmp_path, "--lid-filter", "--lid-model", TOY_MODEL, "--lid-min-prob", "0.999")
    assert kept == sure and len(kept) < len(every)


def test_expected_languages_ignore_script_and_take_any_code_form():
    assert expected_languages("fr") == expected_languages("fra_Latn") == {"fra"}
    assert expected_languages("zh") == {"zho"} and expected_languages("ar") == {"arb"}
    pair = LanguagePair.of("de", "en", str(TOY_MODEL))
    assert pair.matches(GERMAN + ENGLISH[:1], ENGLISH[:2] + GERMAN[:1]) == [True, True, False]


def test_the_filter_needs_both_languages():
    with pytest.raises(Exception, match="--lid-filter needs --src-lang and --trg-lang"):
        LanguagePair.of("de", None)
