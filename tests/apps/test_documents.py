"""Document embeddings: sentence splitting, pooled rows equal to the mean (max) of the sentence
rows embedded separately, streaming in chunks, and `laser embed --documents`."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from laser.apps.documents import DocumentEncoder, embed_documents, pool, split_document
from laser.cli import main
from laser.errors import LaserError
from laser.pipeline import EmbedOptions, embed_file

from conftest import PARITY_MODEL

DOCUMENTS = [
    "The cat sleeps. Dr. Smith feeds it at 5 p.m. every day! Does it purr?",
    "",
    "One sentence without a full stop",
    "   ",
    "Is it late? Yes. Go home.",
]


@pytest.mark.parametrize("text, lang, sentences", [
    ("Dr. Smith came at 5 p.m. today. He left!  Did he?", "en",
     ["Dr. Smith came at 5 p.m. today.", "He left!", "Did he?"]),
    ("Am 3. Okt. 1990 kam er, z. B. mit Anna. Dann ging er.", "deu",
     ["Am 3. Okt. 1990 kam er, z. B. mit Anna.", "Dann ging er."]),
    ("Il est arrivé. M. Dupont est parti.", "fr", ["Il est arrivé.", "M. Dupont est parti."]),
    ("我喜欢猫。你呢？他走了！", "zh", ["我喜欢猫。", "你呢？", "他走了！"]),
    ("Bir. İki.", "kaz", ["Bir.", "İki."]),
    ("", "en", [""]),
    ("  ", "en", [""]),
])
def test_documents_are_split_into_sentences(text, lang, sentences):
    assert split_document(text, lang) == sentences


def test_pooled_rows_are_the_mean_and_max_of_the_sentence_rows(encoder):
    sentences = [split_document(document, "en") for document in DOCUMENTS]
    assert [len(part) for part in sentences] == [3, 1, 1, 1, 3]
    for pooling, reduce in (("mean", np.mean), ("max", np.max)):
        rows = embed_documents(encoder, DOCUMENTS, "en", pooling)
        assert rows.shape == (len(DOCUMENTS), encoder.dim) and rows.dtype == np.float32
        for row, part in zip(rows, sentences):
            separately = np.stack([encoder.encode(sentence, "en") for sentence in part])
            np.testing.assert_allclose(row, reduce(separately, axis=0), atol=1e-6)
    np.testing.assert_allclose(embed_documents(encoder, "", "en"), encoder.encode("", "en"),
                               atol=1e-6)


def test_pool_refuses_an_unknown_pooling():
    with pytest.raises(LaserError, match="unknown pooling 'sum'"):
        pool(np.ones((2, 3), dtype=np.float32), [2], "sum")
    with pytest.raises(LaserError, match="unknown pooling"):
        DocumentEncoder("median")


def test_documents_stream_in_chunks_with_one_row_per_line(tmp_path, encoder):
    text = tmp_path / "docs.txt"
    text.write_text("".join(document + "\n" for document in DOCUMENTS), encoding="utf-8")
    whole = embed_documents(encoder, DOCUMENTS, "en", "max")
    splitter = DocumentEncoder("max")
    report = embed_file(encoder, str(text), str(tmp_path / "docs.npy"),
                        EmbedOptions("en", chunk_lines=2, encode=splitter, rows=splitter.rows))
    assert report.rows == len(DOCUMENTS) and splitter.sentences == 9
    np.testing.assert_allclose(np.load(tmp_path / "docs.npy"), whole, atol=1e-6)
    assert json.loads((tmp_path / "docs.npy.json").read_text())["rows_are"] == \
        "documents: max of the rows of their sentences"


def test_embed_documents_command(tmp_path, encoder):
    text = tmp_path / "docs.txt"
    text.write_text("".join(document + "\n" for document in DOCUMENTS), encoding="utf-8")
    out = tmp_path / "docs.npy"
    result = CliRunner().invoke(main, ["embed", str(text), "-o", str(out), "--lang", "en",
                                       "--model", str(PARITY_MODEL), "--documents"])
    assert result.exit_code == 0, result.output
    assert "pooled 9 sentences into 5 document rows (mean)" in result.output
    np.testing.assert_allclose(np.load(out), embed_documents(encoder, DOCUMENTS, "en"), atol=1e-6)
    result = CliRunner().invoke(main, ["embed", str(text), "-o", str(out), "--lang", "en",
                                       "--model", str(PARITY_MODEL), "--pooling", "max"])
    assert result.exit_code == 1
    assert result.output == "laser: error: --pooling goes with --documents\n"
