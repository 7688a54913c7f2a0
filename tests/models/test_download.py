"""`laser download`, `laser models` and `--model NAME` against a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import hashlib
import json
import re
import socket
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from laser.models import registry
from laser.cli import main
from laser.models.download import Expected, download_model, fetch
from laser.errors import LaserError
from laser.models.files import ModelFiles
from laser.models.resolve import resolve_model
from laser.models.registry import RECORD, load_manifest

from conftest import PARITY, PARITY_MODEL, assert_durable
from file_server import serving

LASER1 = "/laser/models/"
NLLB = "/nllb/laser/"
# The synthetic parity model stands in for the official 93langs files: small, and it embeds.
FILES = {
    LASER1 + "bilstm.93langs.2018-12-26.pt": (PARITY_MODEL / "encoder.pt").read_bytes(),
    LASER1 + "93langs.fcodes": (PARITY_MODEL / "bpe.fcodes").read_bytes(),
    LASER1 + "93langs.fvocab": (PARITY_MODEL / "bpe.fvocab").read_bytes(),
    NLLB + "laser3-wol_Latn.v1.pt": b"laser3 wolof weights",
    NLLB + "laser2.spm": b"sentencepiece model",
    NLLB + "laser2.cvocab": b"sentencepiece vocabulary",
}
ENCODER = LASER1 + "bilstm.93langs.2018-12-26.pt"


@pytest.fixture
def server():
    with serving(FILES) as httpd:
        yield httpd


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def error_line(result) -> str:
    """The one line a failed command printed, checked to be a clean `laser: error:` line."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("laser: error: "), result.stderr
    return lines[0]


def test_manifest_lists_the_official_models():
    models = load_manifest().models
    assert [f.url for f in models["93langs"].files] == [
        "https://dl.fbaipublicfiles.com" + path for path in list(FILES)[:3]]
    assert [f.name for f in models["laser2"].files] == ["laser2.pt", "laser2.spm", "laser2.cvocab"]
    laser3 = [name for name in models if name.startswith("laser3-")]
    assert len(laser3) == 147 and "laser3-wol_Latn" in laser3
    assert [f.name for f in models["laser3-wol_Latn"].files] == [
        "laser3-wol_Latn.v1.pt", "laser2.spm", "laser2.cvocab"]
    assert [f.name for f in models["laser3-amh_Ethi"].files] == [  # one with its own spm
        "laser3-amh_Ethi.v1.pt", "laser3-amh_Ethi.v1.spm", "laser3-amh_Ethi.v1.cvocab"]


def test_download_verifies_records_and_is_idempotent(server, home):
    directory = download_model("93langs", base_url=server.url, progress=False)
    assert directory == home / "93langs"
    for path, body in list(FILES.items())[:3]:
        assert (directory / path.rsplit("/", 1)[-1]).read_bytes() == body
    assert not list(directory.glob("*.part")) and not list(directory.glob(".*"))
    record = json.loads((directory / RECORD).read_text())["files"]
    assert record["93langs.fcodes"]["size"] == len(FILES[LASER1 + "93langs.fcodes"])
    assert len(record["bilstm.93langs.2018-12-26.pt"]["sha256"]) == 64
    assert [r for _, r in server.requests] == [None, None, None]
    download_model("93langs", base_url=server.url, progress=False)
    assert len(server.requests) == 3  # complete and verified: nothing fetched again


def test_downloads_are_durable(server, home, syncs):
    directory = download_model("93langs", base_url=server.url, progress=False)
    files = sorted(directory.iterdir())
    assert [path.name for path in files] == sorted([RECORD, "93langs.fcodes", "93langs.fvocab",
                                                    "bilstm.93langs.2018-12-26.pt"])
    for path in files:
        assert_durable(syncs, path)


def test_resume_continues_the_part_file_left_behind(server, home):
    server.cuts = [100_000]
    with pytest.raises(LaserError, match=r"interrupted after 100000 of \d+ bytes; run the command "
                                         "again to resume"):
        download_model("93langs", base_url=server.url, progress=False, retries=0)
    part = home / "93langs" / "bilstm.93langs.2018-12-26.pt.part"
    assert part.stat().st_size == 100_000
    assert not (home / "93langs" / "bilstm.93langs.2018-12-26.pt").exists()
    download_model("93langs", base_url=server.url, progress=False)
    assert server.requests[1] == (ENCODER, "bytes=100000-")
    assert (home / "93langs" / "bilstm.93langs.2018-12-26.pt").read_bytes() == FILES[ENCODER]
    assert not part.exists()


def test_cli_resumes_by_itself_through_the_mirror_variable(server, home):
    server.cuts = [5000, 7000]
    result = run("download", "93langs", "--quiet", env={"LASER_DOWNLOAD_URL": server.url})
    assert result.exit_code == 0, result.output
    assert [r for _, r in server.requests[:3]] == [None, "bytes=5000-", "bytes=12000-"]
    assert (home / "93langs" / "bilstm.93langs.2018-12-26.pt").read_bytes() == FILES[ENCODER]
    assert result.stderr.count("resuming") == 2 and "laser: warning:" in result.stderr


def test_server_ignoring_range_restarts_from_zero(server, home, tmp_path):
    target = tmp_path / "encoder.pt"
    Path(str(target) + ".part").write_bytes(b"stale bytes from another file")
    server.ignore_range = True
    size, _ = fetch(server.url + ENCODER, target, Expected(None, None), progress=False)
    assert server.requests == [(ENCODER, "bytes=29-")]
    assert size == len(FILES[ENCODER]) and target.read_bytes() == FILES[ENCODER]


def test_complete_part_file_answered_416_is_installed(server, tmp_path):
    target = tmp_path / "codes"
    Path(str(target) + ".part").write_bytes(FILES[LASER1 + "93langs.fcodes"])
    fetch(server.url + LASER1 + "93langs.fcodes", target, Expected(None, None), progress=False)
    assert target.read_bytes() == FILES[LASER1 + "93langs.fcodes"]


def test_checksum_mismatch_is_refused_and_the_partial_file_removed(server, tmp_path):
    target = tmp_path / "codes"
    with pytest.raises(LaserError, match="sha256 mismatch .*the downloaded data was removed"):
        fetch(server.url + LASER1 + "93langs.fcodes", target, Expected(None, "0" * 64),
              progress=False)
    assert list(tmp_path.iterdir()) == []


def test_a_changed_file_no_longer_matches_its_first_download(server, home):
    download_model("93langs", base_url=server.url, progress=False)
    codes = home / "93langs" / "93langs.fcodes"
    codes.unlink()
    server.files[LASER1 + "93langs.fcodes"] = FILES[LASER1 + "93langs.fcodes"][::-1]
    result = run("download", "93langs", "-q", "--base-url", server.url)
    line = error_line(result)
    assert f"{server.url}{LASER1}93langs.fcodes: sha256 mismatch" in line
    assert not codes.exists() and not list(codes.parent.glob("*.part"))


def test_a_file_of_the_wrong_size_is_refused_and_removed(server, home, tmp_path):
    """The size recorded at the first download (the manifest has none) is checked before the
    sha256: a longer file now served is one error line, and neither it nor a .part remains."""
    download_model("93langs", base_url=server.url, progress=False)
    codes = home / "93langs" / "93langs.fcodes"
    codes.unlink()
    size = len(FILES[LASER1 + "93langs.fcodes"])
    server.files[LASER1 + "93langs.fcodes"] = FILES[LASER1 + "93langs.fcodes"] + b"extra\n"
    line = error_line(run("download", "93langs", "-q", "--base-url", server.url))
    assert line == (f"laser: error: {server.url}{LASER1}93langs.fcodes: size mismatch (expected "
                    f"{size} bytes, got {size + 6}); the downloaded data was removed")
    assert not codes.exists() and not list(codes.parent.glob("*.part"))
    server.files[LASER1 + "93langs.fcodes"] = FILES[LASER1 + "93langs.fcodes"]
    target = tmp_path / "short"
    with pytest.raises(LaserError, match=re.escape(f"size mismatch (expected {size + 1} bytes, "
                                                   f"got {size});")):
        fetch(server.url + LASER1 + "93langs.fcodes", target, Expected(size + 1, None),
              progress=False)
    assert not target.exists() and not list(tmp_path.glob("short*"))


@pytest.mark.parametrize("status, words", [(404, "HTTP 404 Not Found"),
                                           (500, "HTTP 500 Internal Server Error")])
def test_server_errors_are_one_line_naming_the_url(server, home, status, words):
    server.status = status
    line = error_line(run("download", "93langs", "--base-url", server.url))
    assert line == f"laser: error: {server.url}{ENCODER}: {words}"


def test_connection_refused_and_timeout(server, home):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    line = error_line(run("download", "laser2", "--base-url", f"http://127.0.0.1:{port}"))
    assert line == f"laser: error: http://127.0.0.1:{port}/nllb/laser/laser2.pt: connection refused"
    server.delay = 0.5
    with pytest.raises(LaserError, match=re.escape(server.url + ENCODER) + ": .*timed out"):
        download_model("93langs", base_url=server.url, progress=False, timeout=0.1)


def test_model_names_resolve_in_every_command(server, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("Hello.\n")
    line = error_line(run("embed", "in.txt", "-o", "out.npy", "-l", "en", "-m", "93langs"))
    assert line == "laser: error: 93langs: model not downloaded; run `laser download 93langs` first"
    assert run("download", "93langs", "laser3-wol_Latn", "-q", "--base-url",
               server.url).exit_code == 0
    assert resolve_model("93langs") == ModelFiles.from_dir(home / "93langs")
    monkeypatch.setenv("LASER_MODEL", "93langs")
    assert resolve_model() == ModelFiles.from_dir(home / "93langs")
    source, out = tmp_path / "de.txt", tmp_path / "de.npy"
    source.write_text("Hallo Welt.\nDas Buch liegt auf dem Tisch.\n")
    result = run("embed", source, "-o", out, "-l", "de", "--model", "93langs", "-q")
    assert result.exit_code == 0, result.output
    assert np.load(out).shape == (2, 80)
    provenance = json.loads((tmp_path / "de.npy.json").read_text())
    assert provenance["model_sha256"] == hashlib.sha256(FILES[ENCODER]).hexdigest()
    line = error_line(run("knn", "build", PARITY / "inputs" / "de.txt", "-o", tmp_path / "x.index",
                          "-m", "laser3-wol_Latn", "--lang", "de"))
    assert "laser3-wol_Latn.v1.pt: not a loadable checkpoint" in line  # the served bytes are fake
    assert "did you mean 93langs" in error_line(run("preprocess", "in.txt", "-l", "en", "-m", "93lang"))
    (home / "93langs" / "93langs.fvocab").unlink()
    with pytest.raises(LaserError, match="incomplete .* run `laser download 93langs` again"):
        resolve_model("93langs")


def test_default_is_the_shipped_model(home, monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (PARITY_MODEL,))
    assert resolve_model("default") == ModelFiles.from_dir(PARITY_MODEL)
    assert resolve_model(str(PARITY_MODEL)) == ModelFiles.from_dir(PARITY_MODEL)  # paths still work
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (tmp_path / "none",))
    with pytest.raises(LaserError, match="ships no default model"):
        resolve_model("default")


def test_models_lists_status_size_and_path(server, home, monkeypatch):
    monkeypatch.setattr(registry, "SHIPPED_MODEL_DIRS", (PARITY_MODEL,))
    download_model("93langs", base_url=server.url, progress=False)
    result = run("models")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1 + 1 + len(load_manifest().models)
    assert lines[0].split() == ["NAME", "FAMILY", "SPACE", "STATUS", "SIZE", "PATH"]
    columns = [lines[0].index(title) for title in ("FAMILY", "SPACE", "STATUS", "SIZE", "PATH")]
    rows = {line.split()[0]: line for line in lines[1:]}
    for line in rows.values():
        assert all(line[c - 2:c] == "  " and line[c] != " " for c in columns)  # aligned
    size = f"{sum(len(body) for body in list(FILES.values())[:3]) / 1024 / 1024:.1f} MiB"
    assert rows["93langs"].split(None, 3)[2:] == ["93langs",
                                                  f"downloaded      {size}  {home / '93langs'}"]
    assert rows["default"].split()[1:3] == ["(encoder)", "shipped"]  # its file name
    assert rows["default"].split()[3].startswith("sha256:")  # a model of its own space
    assert rows["default"].split()[4] == "shipped"
    assert rows["default"].endswith(str(PARITY_MODEL))
    assert rows["laser2"].split()[1:] == ["LASER2", "laser2", "not", "downloaded", "?", "-"]
    assert str(home) in result.stderr


def test_download_cli_errors(home):
    assert error_line(run("download", "laser9")) == (
        "laser: error: laser9: unknown model (did you mean laser2?); "
        "`laser models` lists the models")
    assert error_line(run("download", "default")) == (
        "laser: error: default: the shipped model needs no download")
    assert run("download").exit_code == 2  # click's usage error: a NAME is required
