"""laser.integrations.langchain: LangChain's Embeddings interface in process, taking the arguments
of langchain_community's LaserEmbeddings, without torch."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("langchain_core")
from langchain_core.embeddings import Embeddings  # noqa: E402

from laser import Encoder  # noqa: E402
from laser.errors import LaserError  # noqa: E402
from laser.integrations.langchain import LaserEmbeddings  # noqa: E402
from laser.search.vectors import unit_rows  # noqa: E402

from conftest import PARITY2_MODEL, ROOT  # noqa: E402
from file_server import serving  # noqa: E402

SENTENCES = ["Le livre est sur la table.", "Où est la gare ?"]


@pytest.fixture(scope="module")
def shipped():
    return Encoder.load("default")


def test_documents_and_queries_are_encoder_rows(shipped):
    embeddings = LaserEmbeddings(lang="fra_Latn", model="default")
    assert isinstance(embeddings, Embeddings)
    documents = embeddings.embed_documents(SENTENCES)
    assert isinstance(documents[0][0], float)
    np.testing.assert_allclose(documents, shipped.encode(SENTENCES, "fra_Latn"), atol=1e-6)
    np.testing.assert_allclose(embeddings.embed_query(SENTENCES[1]),
                               shipped.encode(SENTENCES[1], "fra_Latn"), atol=1e-6)
    assert embeddings.embed_documents([]) == []


def test_normalize_gives_unit_rows_and_english_is_the_default(shipped):
    rows = LaserEmbeddings(model="default", normalize=True).embed_documents(["Hello world."])
    np.testing.assert_allclose(rows, unit_rows(shipped.encode(["Hello world."], "en")),
                               atol=1e-6)


def test_without_a_model_lang_picks_the_official_model_downloaded_once(home, monkeypatch):
    # the LASER2 parity model stands in for laser2, served on 127.0.0.1
    files = {f"/nllb/laser/laser2{suffix}": (PARITY2_MODEL / f"encoder{suffix}").read_bytes()
             for suffix in (".pt", ".spm", ".cvocab")}
    with serving(files) as server:
        monkeypatch.setenv("LASER_DOWNLOAD_URL", server.url)
        rows = LaserEmbeddings().embed_documents(SENTENCES)  # LASER2, as langchain_community's
        french = LaserEmbeddings(lang="fra_Latn").embed_documents(SENTENCES)  # LASER2 too
        assert len(server.requests) == 3  # each file once
    expected = Encoder.load(str(PARITY2_MODEL)).encode(SENTENCES, "en")  # English punctuation
    np.testing.assert_allclose(rows, expected, atol=1e-6)
    np.testing.assert_allclose(french, expected, atol=1e-6)


def test_model_is_keyword_only_and_model_dir_belongs_to_lang(tmp_path):
    with pytest.raises(TypeError):
        LaserEmbeddings("fra_Latn", "default")  # model is keyword-only, as a drop-in needs
    with pytest.raises(LaserError, match="model_dir"):
        LaserEmbeddings(model="default", model_dir=str(tmp_path))


def test_it_runs_without_torch():
    probe = ("import sys; from laser.integrations.langchain import LaserEmbeddings; "
             "LaserEmbeddings(model='default').embed_query('Hello.'); "
             "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
