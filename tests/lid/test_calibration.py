"""Calibrated probabilities: the expected calibration error on answers whose error is known, a
calibration fitted on a toy model whose answers are known (a fastText file written here: two
Latin labels and one Cyrillic), a curve for each bucket of line lengths, kept beside the model
and read with it, the shipped model's, and `--min-prob`."""
from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest

import laser
from laser import LaserError
from laser.lid.calibration import (LENGTH_BUCKETS, Calibration, Curve, FitOptions, Scored,
                                   answers_error, calibration_path, expected_calibration_error,
                                   fit_calibration, negative_log_likelihood)
from laser.lid.model import LanguageIdentifier
from laser.lid.scripts import line_lengths, script_ids

from conftest import laser_ok, one_error_line, run_laser

SOFTMAX = 3  # fastText's loss code
# "alpha" scores aaa 2 and bbb 0, "beta" the reverse: softmax probability e^2 / (e^2 + 1)
WORDS = ["alpha", "beta", "гамма"]
LABELS = ["aaa_Latn", "bbb_Latn", "ccc_Cyrl"]
INPUT = np.array([[1, 0], [0, 1], [0, 0]])
OUTPUT = np.array([[2, 0], [0, 2], [0, 0]])
RAW = math.exp(2) / (math.exp(2) + 1)
# Of each word's 4 lines, 3 are of its likeliest label: the calibrated probability is 3/4,
# reached at the temperature 2 / ln 3 (softmax(2 / T) = 3 / 4).
LINES = ["alpha"] * 4 + ["beta"] * 4
GOLD = ["aaa_Latn"] * 3 + ["bbb_Latn"] + ["bbb_Latn"] * 3 + ["aaa_Latn"]
# The same word 8 times scores as the word once (the mean of its rows); of these 10 lines, 9 are
# of its likeliest label: the 8-or-more-word bucket's probability is 9/10.
LONG = " ".join(["alpha"] * 8)
LONG_LINES, LONG_GOLD = [LONG] * 10, ["aaa_Latn"] * 9 + ["bbb_Latn"]
ONE_BUCKET = FitOptions(starts=(1,))


def write_model(path):
    """A fastText classifier of WORDS' rows only (no subwords, no buckets), dense."""
    out = [struct.pack("<ii", 793712314, 12),
           struct.pack("<12id", INPUT.shape[1], 5, 1, 1, 5, 1, SOFTMAX, 3, 0, 0, 0, 100, 1e-4)]
    entries = [(word, 0) for word in WORDS] + [("__label__" + label, 1) for label in LABELS]
    out.append(struct.pack("<iiiqq", len(entries), len(WORDS), len(LABELS), 1000, -1))
    out += [text.encode("utf-8") + b"\0" + struct.pack("<qb", 1, kind) for text, kind in entries]
    for matrix in (INPUT, OUTPUT):
        out += [bytes([0]), struct.pack("<qq", *matrix.shape), matrix.astype("<f4").tobytes()]
    path.write_bytes(b"".join(out))
    return path


@pytest.fixture
def toy(tmp_path):
    return write_model(tmp_path / "toy.ftz")


@pytest.mark.parametrize("probabilities, correct, error", [
    ([0.9] * 10, [True] * 9 + [False], 0.0),
    ([1.0] * 4, [True, True, False, False], 0.5),
    ([0.25, 0.25, 0.95, 0.95], [False, False, True, False], (2 * 0.25 + 2 * 0.45) / 4),
    ([0.0, 0.05, 0.999], [False, True, True], (2 * abs(0.5 - 0.025) + abs(1 - 0.999)) / 3),
    ([], [], 0.0),
])
def test_expected_calibration_error_of_known_answers(probabilities, correct, error):
    """15 equal-width bins (0.05 and 0.0 share [0, 1/15)), each weighted by its answers."""
    assert expected_calibration_error(probabilities, correct) == pytest.approx(error)


def test_the_toy_models_raw_probabilities(toy):
    found = LanguageIdentifier(toy).identify(["alpha", "beta", "гамма", "delta"], top=3)
    assert [[guess.code for guess in line] for line in found] == \
        [["aaa_Latn", "bbb_Latn"], ["bbb_Latn", "aaa_Latn"], ["ccc_Cyrl"], ["und"]]
    assert found[0][0].probability == pytest.approx(RAW + 1e-5, abs=1e-6)
    assert found[2][0].probability == 1.0  # Cyrillic's only label, without the model


def test_the_fitted_temperature_is_the_one_the_answers_call_for(toy):
    scored = LanguageIdentifier(toy, calibrated=False).scored(LINES + ["гамма"],
                                                              GOLD + ["ccc_Cyrl"])
    assert len(scored.gold) == 8  # Cyrillic's only label is not fitted
    calibration = fit_calibration(scored, FitOptions(monotone=False, starts=(1,)))
    temperature = calibration.curves[0].temperature
    assert temperature == pytest.approx(2 / math.log(3), rel=1e-4)
    assert negative_log_likelihood(scored, temperature) < min(
        negative_log_likelihood(scored, temperature * factor) for factor in (0.9, 1.1))
    labels, probabilities = calibration.top(scored.scores.copy(), 2, scored.lengths)
    np.testing.assert_allclose(probabilities, [[0.75, 0.25]] * 8, rtol=1e-5)


def test_a_calibration_beside_the_model_is_read_with_it(toy):
    raw = LanguageIdentifier(toy)
    assert raw.calibration is None
    lines = LINES + ["гамма"]
    before, answered = answers_error(*raw.ranked(lines), GOLD + ["ccc_Cyrl"])
    assert answered == 9 and before == pytest.approx(8 * (RAW + 1e-5 - 0.75) / 9, abs=1e-5)
    fit_calibration(raw.scored(LINES, GOLD), ONE_BUCKET).save(calibration_path(toy))
    assert calibration_path(toy).name == "toy.calibration.json"
    calibrated = LanguageIdentifier(toy)
    assert calibrated.calibration.curves[0].temperature == pytest.approx(2 / math.log(3),
                                                                         rel=1e-4)
    found = calibrated.identify(["alpha", "beta", "гамма"], top=2)
    assert [round(guess.probability, 4) for guess in found[0]] == [0.75, 0.25]
    assert [(guess.code, guess.probability) for guess in found[2]] == [("ccc_Cyrl", 1.0)]
    after, _ = answers_error(*calibrated.ranked(lines), GOLD + ["ccc_Cyrl"])
    assert after == pytest.approx(0.0, abs=1e-4)


def test_the_monotone_map_takes_each_probability_to_its_share_of_right_answers(toy):
    """Lines of two raw probabilities (word rows scaled), right 1/2 and 9/10 of the time."""
    scores = np.array([[1.0, 0.0, -np.inf]] * 10 + [[3.0, 0.0, -np.inf]] * 10, np.float32)
    gold = np.array([0] * 5 + [1] * 5 + [0] * 9 + [1], np.int64)
    lengths = np.full(len(gold), 5)
    calibration = fit_calibration(Scored(scores, gold, lengths), ONE_BUCKET)
    _, probabilities = calibration.top(scores.copy(), 1, lengths)
    np.testing.assert_allclose(probabilities[[0, -1], 0], [0.5, 0.9], atol=1e-6)
    curve = calibration.curves[0]
    assert list(curve.xs) == sorted(curve.xs) and curve.xs[0] == 0.0
    assert list(curve.ys) == sorted(curve.ys)


def test_each_bucket_of_line_lengths_gets_the_temperature_its_answers_call_for(toy):
    """1-word lines right 3/4 of the time, 8-word ones 9/10; the buckets of 2, 3 and 4-7 words
    have no lines and take the curve of all 18 lines, right 15 of 18: softmax(2 / T) = share,
    T = 2 / ln(share / (1 - share))."""
    scored = LanguageIdentifier(toy, calibrated=False).scored(LINES + LONG_LINES,
                                                              GOLD + LONG_GOLD)
    assert scored.lengths.tolist() == [1] * 8 + [8] * 10
    calibration = fit_calibration(scored, FitOptions(monotone=False, min_lines=1))
    assert calibration.starts == LENGTH_BUCKETS == (1, 2, 3, 4, 8)
    shares = [6 / 8] + [15 / 18] * 3 + [9 / 10]
    for curve, share in zip(calibration.curves, shares, strict=True):
        assert curve.temperature == pytest.approx(2 / math.log(share / (1 - share)), rel=1e-4)
    lengths = np.array([1, 2, 3, 5, 8, 40])
    _, probabilities = calibration.top(np.tile(scored.scores[:1], (6, 1)), 1, lengths)
    np.testing.assert_allclose(probabilities[:, 0], [0.75] + [15 / 18] * 3 + [0.9] * 2,
                               rtol=1e-4)


def test_a_bucketed_calibration_beside_the_model_gives_each_length_its_share(toy):
    raw = LanguageIdentifier(toy, calibrated=False)
    fit_calibration(raw.scored(LINES + LONG_LINES, GOLD + LONG_GOLD),
                    FitOptions(min_lines=8)).save(calibration_path(toy))
    calibrated = LanguageIdentifier(toy)
    assert len(calibrated.calibration.curves) == 5
    lines = ["alpha", "alpha alpha", LONG, LONG + " alpha" * 30, "гамма"]
    codes, probabilities = calibrated.ranked(lines)
    assert codes == raw.ranked(lines)[0]  # the answers are the model's: only their probabilities
    assert [round(line[0], 4) for line in probabilities] == [0.75, round(15 / 18, 4), 0.9,
                                                             0.9, 1.0]


@pytest.mark.parametrize("line, words", [
    ("alpha", 1), ("Le chat dort.", 3), ("  a\u3000b\tc  ", 3), ("", 0), ("42", 1),
    ("東京", 1), ("東京は晴れ", 3), ("東京は 晴れ。", 3), ("東京は晴れです。今日も", 6),
    ("สวัสดี", 3), ("カタカナ", 2), ("Привет мир", 2)])
def test_a_lines_length_in_words_counts_two_characters_a_word_without_spaces(line, words):
    """Tokens (split on any Unicode space); in a script written without spaces (Han, Kana,
    Thai...) the characters but spaces, marks included, 2 a word rounded up."""
    lines = [line, "x y", line]
    text = "\n".join(lines).encode("utf-8")
    tokens = np.array([len(text.split()) for text in lines])
    assert line_lengths(text, tokens, script_ids(text, 3)).tolist() == [words, 2, words]


def test_too_few_lines_of_a_length_take_the_curve_of_all_lines(toy):
    scored = LanguageIdentifier(toy, calibrated=False).scored(LINES + LONG_LINES,
                                                              GOLD + LONG_GOLD)
    calibration = fit_calibration(scored, FitOptions(monotone=False, min_lines=9))
    assert [curve.temperature for curve in calibration.curves[:4]] == \
        [calibration.curves[0].temperature] * 4
    assert calibration.curves[0].temperature == pytest.approx(2 / math.log(15 / 3), rel=1e-4)
    assert calibration.curves[4].temperature == pytest.approx(2 / math.log(9), rel=1e-4)


def test_min_prob_answers_und_below_it(toy, tmp_path):
    fit_calibration(LanguageIdentifier(toy).scored(LINES, GOLD),
                    ONE_BUCKET).save(calibration_path(toy))
    source = tmp_path / "in.txt"
    source.write_text("alpha\nbeta\nгамма\n42\n", encoding="utf-8")
    rows = {}
    for threshold in ("0", "0.7", "0.8"):
        rows[threshold] = laser_ok("lid", source, "--lid-model", toy, "--min-prob", threshold,
                                   "--top", "2", "-q").stdout.splitlines()
    assert rows["0"] == ["aaa_Latn\t0.7500\tbbb_Latn\t0.2500", "bbb_Latn\t0.7500\taaa_Latn\t0.2500",
                         "ccc_Cyrl\t1.0000", "und\t0.0000"]
    assert rows["0.7"] == ["aaa_Latn\t0.7500", "bbb_Latn\t0.7500", "ccc_Cyrl\t1.0000",
                           "und\t0.0000"]
    assert rows["0.8"] == ["und\t0.0000", "und\t0.0000", "ccc_Cyrl\t1.0000", "und\t0.0000"]
    found = laser.identify(["alpha", "гамма"], model=str(toy), min_prob=0.8)
    assert [line[0].code for line in found] == ["und", "ccc_Cyrl"]


def test_min_prob_must_be_a_probability(toy, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("alpha\n", encoding="utf-8")
    assert "--min-prob" in run_laser("lid", source, "--min-prob", "1.5").stderr


@pytest.mark.parametrize("content", [
    "not json", json.dumps({"temperature": -1}),
    json.dumps({"temperature": 1, "map": {"x": [0.5, 0.2], "y": [0, 1]}}),
    json.dumps({"buckets": []}),
    json.dumps({"buckets": [{"from_words": 3, "temperature": 1},
                            {"from_words": 1, "temperature": 1}]}),
    json.dumps({"buckets": [{"from_words": 1}]})])
def test_a_bad_calibration_file_is_one_error_naming_it(toy, tmp_path, content):
    calibration_path(toy).write_text(content, encoding="utf-8")
    source = tmp_path / "in.txt"
    source.write_text("alpha\n", encoding="utf-8")
    line = one_error_line(run_laser("lid", source, "--lid-model", toy))
    assert str(calibration_path(toy)) in line and "calibration" in line


def test_fitting_needs_lines_of_the_models_labels(toy):
    with pytest.raises(LaserError, match="no lines to fit"):
        fit_calibration(LanguageIdentifier(toy).scored(["гамма", "42"], ["ccc_Cyrl", "xxx_Latn"]))


def test_a_saved_calibration_reads_back_the_same(tmp_path):
    calibration = Calibration((Curve(1.5, (0.0, 0.5, 1.0), (0.0, 0.4, 0.9)), Curve(0.8)),
                              (1, 4), {"fitted_lines": 3})
    calibration.save(tmp_path / "m.calibration.json")
    again = Calibration.load(tmp_path / "m.calibration.json")
    assert again == calibration and again.about == {"fitted_lines": 3}


def test_a_calibration_file_of_one_map_reads_as_one_bucket(tmp_path):
    """The format before the buckets: `temperature` and `map` at the top."""
    path = tmp_path / "m.calibration.json"
    path.write_text(json.dumps({"method": "temperature, monotone map", "temperature": 1.5,
                                "map": {"x": [0, 0.5, 1], "y": [0, 0.4, 0.9]},
                                "fitted_lines": 3}), encoding="utf-8")
    calibration = Calibration.load(path)
    assert calibration == Calibration((Curve(1.5, (0.0, 0.5, 1.0), (0.0, 0.4, 0.9)),), (1,))
    assert calibration.about == {"fitted_lines": 3}


def test_the_shipped_model_reads_its_calibration_and_keeps_its_answers():
    """models/default/laser-lid.calibration.json, a curve for each bucket of line lengths:
    `laser lid` prints its probabilities, the answers those of the uncalibrated model."""
    model = LanguageIdentifier()
    assert model.calibration is not None and model.calibration.starts == LENGTH_BUCKETS
    raw = LanguageIdentifier(calibrated=False)
    lines = ["Le chat dort sur le canapé depuis ce matin.", "Katze", "Dobrý den", "東京は晴れです",
             "42", "Привет, как дела?"]
    codes, probabilities = model.ranked(lines, top=2)
    raw_codes, raw_probabilities = raw.ranked(lines, top=2)
    assert codes == raw_codes
    assert probabilities != raw_probabilities
    assert all(0 <= p <= 1 for line in probabilities for p in line)
    assert codes[4] == ["und"] and probabilities[4] == [0.0]


def test_laser_lid_prints_the_shipped_calibrations_probabilities_and_thresholds_them(tmp_path):
    """A word alone is right far less often than a sentence: its calibrated probability is low,
    and `--min-prob` turns it to `und` while the sentence keeps its answer."""
    lines = ["Bitte", "Le chat dort sur le canapé depuis ce matin, comme tous les jours.", "42"]
    source = tmp_path / "in.txt"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    codes, probabilities = LanguageIdentifier().ranked(lines)
    assert probabilities[0][0] < 0.6 < probabilities[1][0]
    rows = laser_ok("lid", source, "-q").stdout.splitlines()
    assert rows == [f"{code[0]}\t{probability[0]:.4f}"
                    for code, probability in zip(codes, probabilities)]
    assert [row.split("\t")[0] for row in rows] == ["deu_Latn", "fra_Latn", "und"]
    kept = laser_ok("lid", source, "--min-prob", "0.6", "-q").stdout.splitlines()
    assert kept == ["und\t0.0000", rows[1], "und\t0.0000"]
