"""`embed_file` as the docs call it: the options object, or its fields as keywords."""
import numpy as np
import pytest

from laser.pipeline import EmbedOptions, embed_file


@pytest.fixture
def french(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("Le livre est sur la table.\nBonjour.\n", encoding="utf-8")
    return source


def test_keywords_are_the_options_fields(encoder, french, tmp_path):
    by_keyword = embed_file(encoder, str(french), str(tmp_path / "a.npy"), lang="fr")
    by_options = embed_file(encoder, str(french), str(tmp_path / "b.npy"), EmbedOptions("fr"))
    assert (by_keyword.rows, by_keyword.dim, by_keyword.lang) == (2, encoder.dim, "fr")
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    assert (tmp_path / "a.npy.json").exists()


def test_keywords_override_the_options(encoder, french, tmp_path):
    report = embed_file(encoder, str(french), str(tmp_path / "a.npy"), EmbedOptions("fr"),
                        fp16=True, provenance=False)
    assert report.dtype == "float16" and np.load(tmp_path / "a.npy").dtype == np.float16
    assert not (tmp_path / "a.npy.json").exists()


def test_an_unknown_keyword_or_no_language_is_a_type_error(encoder, french, tmp_path):
    with pytest.raises(TypeError, match="language"):
        embed_file(encoder, str(french), str(tmp_path / "a.npy"), lang="fr", language="fr")
    with pytest.raises(TypeError, match="lang"):
        embed_file(encoder, str(french), str(tmp_path / "a.npy"))
    assert not (tmp_path / "a.npy").exists()
