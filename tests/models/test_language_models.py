"""Official models chosen by language, downloaded from a real HTTP server on 127.0.0.1 (small
real model files stand in for the official ones), then found in the cache by language: the
precedence --model > $LASER_MODEL > the language's downloaded official model > shipped default,
the API's download on demand, the laser_encoders names and the explicit --encoder paths."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
# Imported here, so that the SWIG DeprecationWarnings pytest shows do not reach a command's stderr.
import sentencepiece  # noqa: F401
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.laser_encoders import LaserEncoderPipeline, initialize_encoder, initialize_tokenizer
from laser.models import registry
from laser.encoder import Encoder
from laser.models.files import ModelFiles
from laser.search.vectors import unit_rows
from laser.models.registry import RECORD
from laser.models.resolve import ModelRequest, choose_model, installed_official_model

from conftest import DATA, PARITY_MODEL, PARITY2_MODEL
from file_server import serving

NLLB = "/nllb/laser/"
LASER3_CHECKPOINT = DATA / "parity3" / "model" / "A" / "laser3-A.pt"
SPM = (PARITY2_MODEL / "encoder.spm").read_bytes()
CVOCAB = (PARITY2_MODEL / "encoder.cvocab").read_bytes()
# The LASER2 parity model stands in for laser2, the LASER3 parity checkpoint A for two LASER3
# encoders: Igbo's (LASER2's SentencePiece files) and Amharic's (its own).
FILES = {
    NLLB + "laser2.pt": (PARITY2_MODEL / "encoder.pt").read_bytes(),
    NLLB + "laser2.spm": SPM,
    NLLB + "laser2.cvocab": CVOCAB,
    NLLB + "laser3-ibo_Latn.v1.pt": LASER3_CHECKPOINT.read_bytes(),
    NLLB + "laser3-amh_Ethi.v1.pt": LASER3_CHECKPOINT.read_bytes(),
    NLLB + "laser3-amh_Ethi.v1.spm": SPM,
    NLLB + "laser3-amh_Ethi.v1.cvocab": CVOCAB,
}
SENTENCES = ["Hello world.", "The book is on the table!", "Where is the station?"]
NOTE = ("laser: using the shipped default model; for the official LASER3 encoder of ibo_Latn "
        "run: laser download laser3-ibo_Latn")


@pytest.fixture
def server():
    with serving(FILES) as httpd:
        yield httpd


@pytest.fixture
def home(home, monkeypatch):
    """The empty $LASER_HOME of conftest, with the LASER1 parity model as the shipped default."""
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (PARITY_MODEL,))
    return home


@pytest.fixture
def sentences(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    return path


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def embed(sentences, out, lang, *options, env=None):
    """`laser embed` of the sentences; returns its stderr lines and the model its sidecar names."""
    result = run("embed", sentences, "-o", out, "-l", lang, *options, env=env)
    assert result.exit_code == 0, result.output
    return result.stderr.splitlines(), json.loads(out.with_name(out.name + ".json").read_text())


def test_download_by_language_then_chosen_from_the_cache(server, home, sentences, tmp_path):
    result = run("download", "--lang", "english", "--lang", "igbo", "--lang", "amh", "--lang",
                 "eng_Latn", "-q", "--base-url", server.url)
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 9  # laser2 once, though asked for twice
    expected = {"laser2": ["laser2.pt", "laser2.spm", "laser2.cvocab"],
                "laser3-ibo_Latn": ["laser3-ibo_Latn.v1.pt", "laser2.spm", "laser2.cvocab"],
                "laser3-amh_Ethi": ["laser3-amh_Ethi.v1.pt", "laser3-amh_Ethi.v1.spm",
                                    "laser3-amh_Ethi.v1.cvocab"]}
    for name, files in expected.items():
        record = json.loads((home / name / RECORD).read_text())["files"]
        assert sorted(record) == sorted(files)
        for file in files:
            served = FILES[NLLB + file]
            assert (home / name / file).read_bytes() == served
            assert record[file]["sha256"] == hashlib.sha256(served).hexdigest()
    assert installed_official_model("ig") == ("laser3-ibo_Latn", None)
    igbo = ModelFiles.from_dir(home / "laser3-ibo_Latn")
    assert [igbo.encoder.name, igbo.spm.name, igbo.spm_vocab.name] == expected["laser3-ibo_Latn"]
    assert choose_model(ModelRequest(lang="en")) == choose_model(ModelRequest(model="laser2"))
    assert choose_model(ModelRequest(lang="en")).files == ModelFiles.from_dir(home / "laser2")

    stderr, provenance = embed(sentences, tmp_path / "en.npy", "english")
    assert provenance["model_files"]["encoder"] == str(home / "laser2" / "laser2.pt")
    assert stderr[-1].endswith(f"with the model in {home / 'laser2'}") and len(stderr) == 1
    stderr, provenance = embed(sentences, tmp_path / "de.npy", "en", "--model", "default", "-q")
    assert provenance["model_files"]["encoder"] == str(PARITY_MODEL / "encoder.pt") and not stderr
    np.testing.assert_array_equal(np.load(tmp_path / "en.npy"),
                                  Encoder.load(str(PARITY2_MODEL)).encode(SENTENCES, "en"))
    stderr, provenance = embed(sentences, tmp_path / "ig.npy", "igbo", "-q")
    assert provenance["model_family"] == "laser3" and not stderr  # the transformer, natively
    laser3 = Encoder.load(str(LASER3_CHECKPOINT.parent))
    np.testing.assert_array_equal(np.load(tmp_path / "ig.npy"), laser3.encode(SENTENCES, "ig"))
    assert laser3.dim == 64


def test_precedence_model_then_env_then_downloaded_official_then_default(server, home, sentences,
                                                                         tmp_path):
    stderr, provenance = embed(sentences, tmp_path / "a.npy", "ibo_Latn")
    assert provenance["model_files"]["codes"] == str(PARITY_MODEL / "bpe.fcodes")
    assert stderr[0] == NOTE and len(stderr) == 2  # the note, once, then the summary
    stderr, _ = embed(sentences, tmp_path / "b.npy", "ibo_Latn", "-q")
    assert stderr == []  # quiet
    stderr, _ = embed(sentences, tmp_path / "b.npy", "ibo_Latn")
    assert stderr[0] != NOTE and len(stderr) == 1  # said once already: only the summary
    stderr, _ = embed(sentences, tmp_path / "c.npy", "ang")  # no official model: no note
    assert len(stderr) == 1
    stderr, _ = embed(sentences, tmp_path / "d.npy", "kashmiri", "-q")
    assert stderr == []
    stderr, _ = embed(sentences, tmp_path / "d.npy", "kashmiri")
    assert stderr[0] == ("laser: using the shipped default model; kashmiri may mean kas_Arab "
                         "(kashmiri), kas_Deva (kashmiri); pass one of these codes")

    assert run("download", "laser2", "-q", "--base-url", server.url).exit_code == 0
    _, provenance = embed(sentences, tmp_path / "e.npy", "fr", "-q")
    assert provenance["model_files"]["spm"] == str(home / "laser2" / "laser2.spm")
    env = {"LASER_MODEL": str(PARITY_MODEL)}
    _, provenance = embed(sentences, tmp_path / "f.npy", "fr", "-q", env=env)
    assert provenance["model_family"] == "laser1"
    _, provenance = embed(sentences, tmp_path / "g.npy", "fr", "-q", "--model", "laser2", env=env)
    assert provenance["model_family"] == "laser2"
    result = run("preprocess", sentences, "-l", "french", "--stage", "spm")
    laser2 = Encoder.load(str(PARITY2_MODEL))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == laser2.preprocessor(SENTENCES, "fr")


def test_api_downloads_the_official_model_on_demand(server, home, monkeypatch):
    monkeypatch.setenv("LASER_DOWNLOAD_URL", server.url)
    with pytest.raises(LaserError, match=r"^laser2: model not downloaded; run `laser download "
                                         r"laser2` \(or load it with download=True\)$"):
        Encoder.load(lang="english", download=False)
    assert server.requests == []
    encoder = Encoder.load(lang="english")
    assert encoder.files == ModelFiles.from_dir(home / "laser2")
    reference = Encoder.load(str(PARITY2_MODEL)).encode(SENTENCES, "en")
    np.testing.assert_array_equal(encoder.encode(SENTENCES, "en"), reference)
    with pytest.raises(LaserError, match="^xx: unknown language"):
        Encoder.load(lang="xx")

    pipeline = LaserEncoderPipeline(lang="english")  # laser_encoders' common path
    embeddings = pipeline.encode_sentences(SENTENCES, normalize_embeddings=True)
    np.testing.assert_allclose(embeddings, unit_rows(reference), rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1, atol=1e-6)
    elsewhere = home.parent / "elsewhere"
    tokenizer = initialize_tokenizer(lang="fr", model_dir=str(elsewhere))
    assert (elsewhere / "laser2" / "laser2.spm").is_file()
    pieces = tokenizer.tokenize(SENTENCES[0])
    assert [pieces] == Encoder.load(str(PARITY2_MODEL)).preprocessor(SENTENCES[:1], "en")
    encoder = initialize_encoder(laser="laser2", model_dir=str(elsewhere))
    np.testing.assert_array_equal(encoder.encode_sentences([pieces]), reference[:1])
    with pytest.raises(LaserError, match="^english: there is no LASER3 encoder for it"):
        LaserEncoderPipeline(lang="english", laser="laser3")


def test_explicit_encoder_and_sentencepiece_paths(home, sentences, tmp_path):
    explicit = ["--encoder", PARITY2_MODEL / "encoder.pt",
                "--spm-model", PARITY2_MODEL / "encoder.spm"]
    _, provenance = embed(sentences, tmp_path / "x.npy", "en", "-q", *explicit)
    assert provenance["model_files"]["spm_vocab"] == str(PARITY2_MODEL / "encoder.cvocab")
    _, _ = embed(sentences, tmp_path / "y.npy", "en", "-q", "--model", PARITY2_MODEL)
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), np.load(tmp_path / "y.npy"))
    for options, message in [
        (["--spm-model", PARITY2_MODEL / "encoder.spm"], "pass --encoder with either --bpe-codes"),
        (explicit + ["--bpe-vocab", PARITY_MODEL / "bpe.fvocab"], "--bpe-vocab goes with"),
    ]:
        result = run("embed", sentences, "-o", tmp_path / "z.npy", "-l", "en", *options)
        assert result.exit_code == 1 and message in result.stderr, result.output


def _closed_port_url() -> str:
    """The URL of a 127.0.0.1 port nothing listens on: every download is refused."""
    import socket
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{free.getsockname()[1]}"


def test_offline_requests_leave_no_empty_model_directory(home, sentences, tmp_path, monkeypatch):
    closed = _closed_port_url()
    result = run("download", "--lang", "igbo", "-q", "--base-url", closed)
    assert result.exit_code == 1 and "connection refused" in result.stderr
    monkeypatch.setenv("LASER_DOWNLOAD_URL", closed)
    with pytest.raises(LaserError, match="connection refused"):
        Encoder.load(lang="igbo")
    with pytest.raises(LaserError, match="connection refused"):
        initialize_tokenizer(lang="igbo")
    assert not home.exists() or list(home.iterdir()) == []


def test_a_tokenizer_downloads_only_the_sentencepiece_files(server, home, monkeypatch):
    monkeypatch.setenv("LASER_DOWNLOAD_URL", server.url)
    tokenizer = initialize_tokenizer(lang="igbo")
    assert sorted(path for path, _ in server.requests) == [NLLB + "laser2.cvocab",
                                                           NLLB + "laser2.spm"]
    assert sorted(path.name for path in (home / "laser3-ibo_Latn").iterdir()) == [
        RECORD, "laser2.cvocab", "laser2.spm"]
    assert [tokenizer.tokenize(SENTENCES[0])] == Encoder.load(str(PARITY2_MODEL)).preprocessor(
        SENTENCES[:1], "en")
    assert initialize_tokenizer(lang="igbo").spm_model == tokenizer.spm_model  # from the cache
    initialize_encoder(lang="igbo")  # the checkpoint now, and nothing fetched twice
    assert sorted(path for path, _ in server.requests) == [
        NLLB + "laser2.cvocab", NLLB + "laser2.spm", NLLB + "laser3-ibo_Latn.v1.pt"]
