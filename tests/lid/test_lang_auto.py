"""`lang="auto"`: each line preprocessed as its identified language, rows in input order, equal to
embedding each line with its language named."""
from __future__ import annotations

import numpy as np
import pytest

from laser import Encoder, LaserError

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
