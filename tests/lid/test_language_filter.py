"""The language filter of mined pairs: `laser mine --lid-filter` drops the pairs whose sides are
not identified as --src-lang and --trg-lang, and counts them in the summary."""
from __future__ import annotations

import numpy as np
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
    assert (f"dropped {len(every) - len(kept)} pairs whose source or target is identified "
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


def test_the_dropped_count_adds_up_over_every_chunk_of_pairs(tmp_path):
    """Pairs written a chunk at a time (as `laser mine` streams them): the summary's dropped
    count is the sum over all chunks, not the last chunk's."""
    from laser.mining.corpus import scan_corpus
    from laser.mining.language_filter import language_filter
    from laser.mining.output import PairFormat, PairTexts, write_pair_chunks
    from laser.mining.retrieval import Pairs
    src_lines, trg_lines = FRENCH + GERMAN, ENGLISH + GERMAN
    src, trg = tmp_path / "src.txt", tmp_path / "trg.txt"
    src.write_text("\n".join(src_lines) + "\n", encoding="utf-8")
    trg.write_text("\n".join(trg_lines) + "\n", encoding="utf-8")
    # French-English pairs kept, German-German dropped: chunks of 3, 2 and 1 pairs that drop
    # 1, 1 and 0 pairs (a count set per chunk would end at 0)
    pairs = [(0, 0), (4, 4), (1, 1), (5, 5), (2, 2), (3, 3)]
    chunks = [Pairs(np.array([s for s, _ in part]), np.array([t for _, t in part]),
                    np.linspace(1.2, 1.1, len(part)))
              for part in (pairs[:3], pairs[3:5], pairs[5:])]
    texts = PairTexts(lambda lines: {line: src_lines[line] for line in lines.tolist()},
                      lambda lines: {line: trg_lines[line] for line in lines.tolist()})
    keep = language_filter(LanguagePair.of("fr", "en", str(TOY_MODEL)))
    out = tmp_path / "mined.tsv"
    written = write_pair_chunks(str(out), chunks, texts, scan_corpus(str(src)),
                                scan_corpus(str(trg)), PairFormat(), keep)
    kept = [line.split("\t")[1:] for line in out.read_text(encoding="utf-8").splitlines()]
    assert kept == [[FRENCH[i], ENGLISH[i]] for i in range(4)]
    assert (written.count, written.dropped) == (4, 2)
