"""`laser embed` and `laser preprocess` end to end: formats, odd input, errors, atomic output."""
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main

from conftest import PARITY, PARITY_MODEL

MODEL = ["--model", str(PARITY_MODEL)]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def test_embed_matches_official_npy(tmp_path):
    out = tmp_path / "fr.npy"
    result = run("embed", PARITY / "inputs" / "batching_fr.txt", "-o", out, "--lang", "fr", *MODEL)
    assert result.exit_code == 0, result.output
    expected = np.load(PARITY / "expected" / "batching_fr.npy")
    got = np.load(out)
    assert got.dtype == np.float32 and got.shape == (400, 80)
    assert np.abs(got - expected).max() <= 1e-5
    provenance = json.loads((tmp_path / "fr.npy.json").read_text())
    assert provenance["rows"] == 400 and provenance["lang"] == "fr"
    assert len(provenance["model_sha256"]) == 64
    assert provenance["model_name"] == "encoder"  # the checkpoint's file name without .pt


def test_raw_format_and_fp16(tmp_path):
    source = PARITY / "inputs" / "de.txt"
    run("embed", source, "-o", tmp_path / "a.npy", "-l", "de", *MODEL)
    assert run("embed", source, "-o", tmp_path / "a.raw", "-l", "de", "--format", "raw",
               *MODEL).exit_code == 0
    assert run("embed", source, "-o", tmp_path / "h.npy", "-l", "de", "--fp16", *MODEL).exit_code == 0
    reference = np.load(tmp_path / "a.npy")
    raw = np.fromfile(tmp_path / "a.raw", dtype=np.float32).reshape(-1, 80)
    assert np.array_equal(raw, reference)
    half = np.load(tmp_path / "h.npy")
    assert half.dtype == np.float16 and np.allclose(half, reference, atol=1e-2)


def test_odd_but_valid_input_keeps_one_row_per_line(tmp_path):
    source = tmp_path / "odd.txt"
    long_line = " ".join(["word"] * 20000)
    source.write_bytes("\ufeffBOM first\r\n\n   \nCRLF line\r\n".encode() + long_line.encode()
                       + b"\nno final newline")
    out = tmp_path / "odd.npy"
    result = run("embed", source, "-o", out, "-l", "en", *MODEL)
    assert result.exit_code == 0, result.output
    rows = np.load(out)
    assert rows.shape == (6, 80) and np.isfinite(rows).all()
    assert np.array_equal(rows[1], rows[2])  # empty and whitespace-only lines embed alike
    clean = run("embed", "-", "-o", tmp_path / "clean.npy", "-l", "en", *MODEL,
                input="BOM first\nCRLF line\n")
    assert clean.exit_code == 0
    assert np.abs(np.load(tmp_path / "clean.npy") - rows[[0, 3]]).max() <= 1e-6


def test_stdin_input(tmp_path):
    out = tmp_path / "stdin.npy"
    result = run("embed", "-", "-o", out, "-l", "en", *MODEL, input="one\ntwo\nthree")
    assert result.exit_code == 0
    assert np.load(out).shape == (3, 80)


@pytest.mark.parametrize("content, message", [
    (b"good\nbad \xff\xfe line\n", "bad.txt:2: invalid UTF-8"),
    (b"good\nfine\nnul\x00byte\n", "bad.txt:3: contains a NUL byte"),
])
def test_bad_input_is_one_error_line_and_no_output(tmp_path, content, message):
    source = tmp_path / "bad.txt"
    source.write_bytes(content)
    out = tmp_path / "out.npy"
    out.write_bytes(b"previous result")
    result = run("embed", source, "-o", out, "-l", "en", *MODEL)
    assert result.exit_code == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    assert out.read_bytes() == b"previous result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "out.npy"]


@pytest.mark.parametrize("args, message", [
    (["embed", "missing.txt", "-o", "x.npy", "-l", "en", *MODEL], "missing.txt: no such file"),
    (["embed", "{src}", "-o", "x.npy", "-l", "en", "--model", "nowhere"], "nowhere: model directory not found"),
    (["embed", "{src}", "-o", "x.npy", "-l", "en", "--encoder", "{src}", "--bpe-codes",
      str(PARITY_MODEL / "bpe.fcodes")], "not a loadable checkpoint"),
    (["embed", "{src}", "-o", "no/such/dir/x.npy", "-l", "en", *MODEL], "output directory does not exist"),
])
def test_errors_name_the_file(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src.txt").write_text("hello\n")
    result = run(*[a.replace("{src}", "src.txt") for a in args])
    assert result.exit_code == 1
    assert message in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "x.npy").exists()


def test_existing_output_is_overwritten(tmp_path):
    out = tmp_path / "out.npy"
    source = tmp_path / "in.txt"
    source.write_text("first\n")
    run("embed", source, "-o", out, "-l", "en", *MODEL)
    source.write_text("first\nsecond\n")
    assert run("embed", source, "-o", out, "-l", "en", *MODEL).exit_code == 0
    assert np.load(out).shape == (2, 80)


@pytest.mark.parametrize("stage", ["tok", "bpe"])
@pytest.mark.parametrize("stem, lang", [("edge", "en"), ("zh", "cmn"), ("ja", "jpn"), ("el", "ell")])
def test_preprocess_writes_exactly_what_the_official_pipeline_wrote(tmp_path, stage, stem, lang):
    out = tmp_path / f"{stem}.{stage}"
    result = run("preprocess", PARITY / "inputs" / f"{stem}.txt", "-o", out, "-l", lang,
                 "--stage", stage, *MODEL)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (PARITY / "expected" / f"{stem}.{stage}").read_bytes()


def test_console_script_runs_without_traceback(tmp_path):
    laser = [sys.executable, "-m", "laser", "embed", str(tmp_path / "absent.txt"), "-o",
             str(tmp_path / "o.npy"), "-l", "en", *MODEL]
    completed = subprocess.run(laser, capture_output=True, text=True)
    assert completed.returncode == 1
    assert completed.stderr.strip() == f"laser: error: {tmp_path / 'absent.txt'}: no such file"
