"""LASER3 (SentencePiece + fairseq transformer) against the official SentenceEncoder outputs, and
the restricted reading of fairseq checkpoints.

Ground truth: tests/data/parity3 (README there): checkpoints A (post-norm, sinusoidal, final MLM
LayerNorm, maxpool, encoder+decoder state), B (pre-norm, learned positions, cls, float16, left
padded) and C (omegaconf cfg, layernorm_embedding, no <s>, left padded), each in its own model
directory with the LASER2 fixture SentencePiece model and dictionary.
"""
import argparse
import json
import os
import shutil

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from laser.cli import main
from laser.errors import LaserError
from laser.runtime.bilstm import load_checkpoint, torch_tensors
from laser.models.checkpoint import plain_config, read_checkpoint
from laser.encoder import Encoder, TruncationWarning
from laser.models.files import ModelFiles

from conftest import PARITY2_MODEL, PARITY_MODEL, PARITY3, PARITY3_STEMS, fixture_language, \
    read_fixture_lines

CHECKPOINTS = ("A", "B", "C")
TOLERANCE = 1e-5
# Batch composition changes float32 reduction orders: a few ulps of values up to ~5, as in the
# official encoder (one sentence per batch moves it by up to 1.5e-6, fixture README).
BATCH_TOLERANCE = 2e-6


def model_dir(name: str):
    return PARITY3 / "model" / name


@pytest.fixture(scope="module")
def encoders(device):
    return {name: Encoder.load(str(model_dir(name)), device=device) for name in CHECKPOINTS}


def _inputs(stem):
    return read_fixture_lines(PARITY3 / "inputs" / f"{stem}.txt")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def test_transformer_checkpoints_are_the_laser3_generation(encoders):
    assert ModelFiles.from_dir(model_dir("A")).family == "laser2"  # its preprocessing
    assert {name: encoder.family for name, encoder in encoders.items()} == dict.fromkeys(
        CHECKPOINTS, "laser3")
    assert Encoder.load(str(PARITY2_MODEL)).family == "laser2"


def test_mask_entry_follows_the_final_layer_norm_rule(encoders):
    assert {name: len(e.dictionary) for name, e in encoders.items()} == {"A": 4002, "B": 4002,
                                                                           "C": 4001}
    assert encoders["A"].dictionary["<mask>"] == 4001 and "<mask>" not in encoders["C"].dictionary


def test_ids_start_with_bos_only_where_the_cfg_says(encoders):
    piece = read_fixture_lines(PARITY3 / "expected" / "en.spm")[0].split()[0]
    assert encoders["A"].token_ids(piece) == [0, encoders["A"].dictionary[piece], 2]
    assert encoders["A"].token_ids("") == [0, 2] and encoders["C"].token_ids("") == [2]
    assert encoders["C"].dictionary[piece] == encoders["A"].dictionary[piece] > 3


@pytest.mark.device
@pytest.mark.parametrize("stem", PARITY3_STEMS)
@pytest.mark.parametrize("name", CHECKPOINTS)
def test_embeddings_match_the_official_encoder(encoders, name, stem):
    encoder, lang = encoders[name], fixture_language(stem)
    lines = _inputs(stem)
    assert encoder.preprocessor(lines, lang) == read_fixture_lines(
        PARITY3 / "expected" / f"{stem}.spm")
    got = encoder.encode(lines, lang)
    expected = np.load(PARITY3 / "expected" / name / f"{stem}.npy")
    assert got.shape == expected.shape and got.dtype == np.float32
    assert np.abs(got - expected).max() <= TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("name", ["A", "B"])
def test_result_does_not_depend_on_batch_companions(encoders, name):
    encoder = encoders[name]
    pieces = encoder.preprocessor(_inputs("batching_fr")[:100] + _inputs("edge"), "fr")
    together = encoder.encode_bpe(pieces)
    alone = np.concatenate([encoder.encode_bpe([line]) for line in pieces[::10]])
    small = Encoder(ModelFiles.from_dir(model_dir(name)), max_tokens=300).encode_bpe(pieces)
    assert np.abs(together[::10] - alone).max() <= BATCH_TOLERANCE
    assert np.abs(together - small).max() <= BATCH_TOLERANCE
    assert np.abs(together - encoder.encode_bpe(pieces[::-1])[::-1]).max() <= BATCH_TOLERANCE


def test_max_length_keeps_bos_and_eos():
    encoder = Encoder(ModelFiles.from_dir(model_dir("A")), max_length=5)
    sentence = " ".join(["bonjour"] * 40)
    with pytest.warns(TruncationWarning):
        row = encoder.encode([sentence], "fr")
    ids = encoder.token_ids(encoder.preprocessor([sentence], "fr")[0])
    assert ids[0] == 0 and len(ids) > 7
    assert np.array_equal(row, encoder.encode_ids([ids[:6] + [2]]))


def test_learned_positions_beyond_the_table_are_a_clear_error(tmp_path):
    raw = read_checkpoint(model_dir("B") / "laser3-B.pt")
    cfg = plain_config(raw["cfg"]["model"])
    raw["cfg"]["model"] = argparse.Namespace(**{**cfg, "max_source_positions": 8})
    raw["model"] = torch_tensors(raw["model"])  # read_checkpoint gives numpy arrays
    raw["model"]["embed_positions.weight"] = raw["model"]["embed_positions.weight"][:10]
    directory = _model_copy(tmp_path, "B", raw)
    encoder = Encoder.load(str(directory))
    assert encoder.encode(["un deux"], "fr").shape == (1, 64)
    with pytest.raises(LaserError, match="longer than this model's 8 learned positions"):
        encoder.encode([" ".join(["bonjour"] * 20)], "fr")


def _model_copy(tmp_path, name, raw=None, vocab=True):
    """A copy of fixture model `name`, its checkpoint replaced by `raw` when given."""
    directory = tmp_path / name
    directory.mkdir()
    shutil.copy(model_dir(name) / "encoder.spm", directory)
    if vocab:
        shutil.copy(model_dir(name) / "encoder.cvocab", directory)
    if raw is None:
        shutil.copy(model_dir(name) / f"laser3-{name}.pt", directory)
    else:
        torch.save(raw, directory / f"laser3-{name}.pt")
    return directory


def test_without_cvocab_the_model_is_refused(tmp_path):
    directory = _model_copy(tmp_path, "A", vocab=False)
    with pytest.raises(LaserError, match=r"needs its fairseq dictionary \(\*\.cvocab\)"):
        Encoder.load(str(directory))


def test_a_dictionary_of_another_size_is_refused(tmp_path):
    directory = _model_copy(tmp_path, "C")
    vocab = directory / "encoder.cvocab"
    vocab.write_text("".join(vocab.read_text(encoding="utf-8").splitlines(True)[:-1]),
                     encoding="utf-8")
    with pytest.raises(LaserError, match=r"do not match its cfg and dictionary \(4000 entries\)"):
        Encoder.load(str(directory))


def test_a_transformer_checkpoint_with_fastbpe_files_is_refused(tmp_path):
    shutil.copytree(PARITY_MODEL, tmp_path / "m")
    os.remove(tmp_path / "m" / "encoder.pt")
    shutil.copy(model_dir("A") / "laser3-A.pt", tmp_path / "m")
    with pytest.raises(LaserError, match="transformer checkpoint cannot be used with LASER1"):
        Encoder.load(str(tmp_path / "m"))


def test_the_bilstm_loader_names_a_transformer_checkpoint():
    with pytest.raises(LaserError, match=r"fairseq transformer checkpoint \(LASER3\), not a "):
        load_checkpoint(model_dir("C") / "laser3-C.pt")


# --- the restricted unpickler ---

MARKER = "laser-unpickler-test-marker"


class RunsCode:
    """Unpickling this would run a shell command that creates a file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


class Unknown:
    pass


def test_a_pickle_that_runs_code_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / MARKER
    path = tmp_path / "evil.pt"
    torch.save({"cfg": {"model": RunsCode(marker)}, "model": {}}, path)
    with pytest.raises(LaserError) as error:
        read_checkpoint(path)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{path}: refused")
    assert "system" in message and "nothing was executed" in message
    assert not marker.exists()


def test_an_unknown_class_is_refused(tmp_path):
    path = tmp_path / "unknown.pt"
    torch.save({"cfg": {"model": Unknown()}, "model": {}}, path)
    with pytest.raises(LaserError, match=r"asks for .*Unknown, which is neither a tensor"):
        read_checkpoint(path)


def test_the_cli_refuses_a_malicious_model_in_one_line(tmp_path):
    directory = _model_copy(tmp_path, "A", raw={"cfg": {"model": RunsCode(tmp_path / MARKER)},
                                                "model": {}})
    result = run("embed", "-", "-o", tmp_path / "x.npy", "-l", "fr", "-m", directory,
                 input="bonjour\n")
    assert result.exit_code == 1
    line, = result.stderr.splitlines()
    assert line.startswith("laser: error: ") and "refused" in line
    assert not (tmp_path / MARKER).exists() and not (tmp_path / "x.npy").exists()


def test_configs_become_plain_data():
    namespace = plain_config(read_checkpoint(model_dir("A") / "laser3-A.pt")["cfg"])
    omegaconf = plain_config(read_checkpoint(model_dir("C") / "laser3-C.pt")["cfg"])
    assert type(namespace["model"]) is dict and type(omegaconf) is dict
    assert namespace["model"]["sentemb_criterion"] == "maxpool"
    assert omegaconf["model"]["layernorm_embedding"] is True
    assert omegaconf["model"]["encoder_embed_dim"] == 64 and omegaconf["model"]["arch"]


def test_a_namespace_saved_by_argparse_reads_as_its_fields(tmp_path):
    path = tmp_path / "ns.pt"
    torch.save({"cfg": {"model": argparse.Namespace(a=1, b=[2, "x"])}}, path)
    assert plain_config(read_checkpoint(path)["cfg"]) == {"model": {"a": 1, "b": [2, "x"]}}


# --- the commands ---

def test_embed_command_on_a_laser3_directory(tmp_path):
    out = tmp_path / "fr.npy"
    result = run("embed", PARITY3 / "inputs" / "fr.txt", "-o", out, "--lang", "fr",
                 "--model", model_dir("B"), "-q")
    assert result.exit_code == 0, result.output
    assert np.abs(np.load(out) - np.load(PARITY3 / "expected" / "B" / "fr.npy")).max() <= TOLERANCE
    record = json.loads((tmp_path / "fr.npy.json").read_text())
    assert record["model_family"] == "laser3"
    assert record["model_network"] == {"kind": "transformer", "pooling": "cls",
                                       "prepend_bos": True, "dim": 64, "dictionary_size": 4002}
    digests = record["model_files_sha256"]
    assert set(digests) == {"encoder", "spm", "spm_vocab"}
    assert digests["encoder"] == record["model_sha256"] == ModelFiles.from_dir(
        model_dir("B")).sha256()


def test_preprocess_and_score_work_unchanged(tmp_path):
    source = PARITY3 / "inputs" / "edge_spm.txt"
    pieces = run("preprocess", source, "-l", "en", "-m", model_dir("C"), "-q")
    assert pieces.stdout.encode() == (PARITY3 / "expected" / "edge_spm.spm").read_bytes()
    wrong = run("preprocess", source, "-l", "en", "-m", model_dir("C"), "--stage", "bpe")
    assert wrong.stderr.strip() == "laser: error: LASER3 models have no 'bpe' stage; choose " \
                                   "pre or spm"
    out = tmp_path / "scores.tsv"
    result = run("score", source, source, "--src-lang", "en", "--trg-lang", "en", "--method",
                 "cosine", "-o", out, "-m", model_dir("A"), "-q")
    assert result.exit_code == 0, result.output
    scores = [float(line.split("\t")[0]) for line in out.read_text().splitlines()]
    assert len(scores) == len(_inputs("edge_spm")) and min(scores) > 0.9999
