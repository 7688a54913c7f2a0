"""Where `-o` writes: a regular file (or a new path) atomically, a symlink through to its target,
a device or a FIFO as a stream (with no sidecar beside it, a write error one line), and '-' as
standard output in every command that writes a file."""
from __future__ import annotations

import io
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main

from conftest import PARITY, PARITY_MODEL, as_nobody

MODEL = ["--model", str(PARITY_MODEL)]
ENGLISH = PARITY / "inputs" / "en.txt"
ENGLISH_NPY = PARITY / "expected" / "en.npy"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def embed(output, *extra):
    return run("embed", ENGLISH, "-o", output, "-l", "en", "-q", *MODEL, *extra)


SYSTEM_DEVICES = {3: Path("/dev/null"), 7: Path("/dev/full")}


def device(path: Path, minor: int) -> Path:
    """A character device of the memory driver (1, minor): 3 is null, 7 is full. Made at `path`
    where mknod is allowed and the file system lets it be opened (so that a regression cannot
    replace the machine's own), else the system's /dev/null or /dev/full, written to and never
    replaced (a user without root could not replace it anyway)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        os.close(os.open(path, os.O_WRONLY))  # a file system mounted nodev refuses this
        return path
    except OSError:
        if os.path.lexists(path):
            os.unlink(path)
    system = SYSTEM_DEVICES[minor]
    if not (is_char_device(system) and os.access(system, os.W_OK)):
        pytest.skip(f"cannot make a character device here, nor write {system}")
    return system


@pytest.fixture
def full_device(tmp_path) -> Path:
    """A device whose every write fails with ENOSPC."""
    return device(tmp_path / "full", 7)


def is_char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


@pytest.mark.parametrize("command", [
    ["embed", ENGLISH, "-l", "en", "-q", *MODEL],
    ["embed", ENGLISH, "-l", "en", "-q", "--format", "raw", *MODEL],
    ["preprocess", ENGLISH, "-l", "en", "-q", *MODEL],
    ["knn", "build", ENGLISH_NPY, "-q"],
], ids=["npy", "raw", "text", "index"])
def test_a_write_error_on_a_device_fails_in_one_line(full_device, command):
    result = run(*command, "-o", full_device)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"laser: error: {full_device}: cannot write (no space left on device)"]
    assert is_char_device(full_device)
    assert not Path(f"{full_device}.json").exists()


def test_a_character_device_is_written_through_and_kept(tmp_path):
    null = device(tmp_path / "null", 3)
    assert embed(null).exit_code == 0
    result = run("knn", "build", ENGLISH_NPY, "-q", "-o", null)
    assert result.exit_code == 0, result.output
    assert is_char_device(null)
    assert not list(null.parent.glob(f"{null.name}.json")) + list(null.parent.glob(".null.*"))
    assert [path.name for path in tmp_path.iterdir()] in ([], ["null"])  # no sidecar, no temp


def test_where_no_device_can_be_made_the_system_ones_are_written():
    """As `nobody` (who may not mknod), the stream cases run on /dev/null and /dev/full."""
    shared = Path(tempfile.mkdtemp(prefix="laser-devices-"))
    try:
        shared.chmod(0o777)
        source = Path(shutil.copy(ENGLISH_NPY, shared / "en.npy"))
        assert run("knn", "build", source, "-q", "-o", shared / "warm.index").exit_code == 0

        def write_to_devices() -> list[tuple[str, int, str]]:
            outputs = (device(shared / "null", 3), device(shared / "full", 7))
            return [(str(output), result.exit_code, result.stderr) for output in outputs
                    for result in [run("knn", "build", source, "-q", "-o", output)]]
        outcomes = as_nobody(write_to_devices)
        assert sorted(path.name for path in shared.iterdir()) == ["en.npy", "warm.index",
                                                                  "warm.index.json"]
    finally:
        shutil.rmtree(shared)
    assert outcomes == [
        ("/dev/null", 0, ""),
        ("/dev/full", 1, "laser: error: /dev/full: cannot write (no space left on device)\n")]


def _read_fifo_in_background(fifo: Path) -> tuple[threading.Thread, dict, int]:
    """A thread reading `fifo` to its end, and a descriptor that keeps it open for writing
    (so the reader's open never waits; close it to let the reader see the end)."""
    received: dict = {}
    held = os.open(fifo, os.O_RDWR)

    def read() -> None:
        with open(fifo, "rb") as stream:
            received["bytes"] = stream.read()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, received, held


@pytest.mark.parametrize("command", [
    ["embed", ENGLISH, "-l", "en", "-q", *MODEL],
    ["preprocess", ENGLISH, "-l", "en", "-q", *MODEL],
], ids=["embeddings", "text"])
def test_a_fifo_reader_gets_the_bytes_of_the_file(tmp_path, command):
    assert run(*command, "-o", tmp_path / "file").exit_code == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader, received, held = _read_fifo_in_background(fifo)
    result = run(*command, "-o", fifo)
    os.close(held)
    reader.join()
    assert result.exit_code == 0, result.output
    assert received["bytes"] == (tmp_path / "file").read_bytes()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not (tmp_path / "fifo.json").exists()


def test_a_symlink_stays_a_link_and_its_target_gets_the_output(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link.npy"
    link.symlink_to(elsewhere / "en.npy")  # dangling: the target is created
    assert embed(link).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(elsewhere / "en.npy")
    np.testing.assert_allclose(np.load(elsewhere / "en.npy"), np.load(ENGLISH_NPY), atol=1e-5)
    text_link = tmp_path / "link.txt"
    (elsewhere / "old.txt").write_text("old\n", encoding="utf-8")
    text_link.symlink_to(elsewhere / "old.txt")  # an existing target is replaced
    assert run("preprocess", ENGLISH, "-l", "en", "-q", *MODEL, "-o", text_link).exit_code == 0
    assert text_link.is_symlink()
    assert len((elsewhere / "old.txt").read_text(encoding="utf-8").splitlines()) == 30
    assert not list(elsewhere.glob(".*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_dash_is_standard_output_for_binary_outputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert embed(tmp_path / "en.npy").exit_code == 0
    result = run("embed", ENGLISH, "-o", "-", "-l", "en", *MODEL)
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (tmp_path / "en.npy").read_bytes()
    assert result.stderr.startswith("wrote 30 x 80 float32 embeddings to standard output in ")

    import faiss
    result = run("knn", "build", ENGLISH_NPY, "-q", "-o", "-")
    assert result.exit_code == 0, result.output
    index = faiss.deserialize_index(np.frombuffer(result.stdout_bytes, dtype=np.uint8))
    assert index.ntotal == 30

    from scipy.sparse import load_npz
    result = run("knn", "graph", ENGLISH_NPY, "-k", "2", "-q", "-o", "-")
    assert result.exit_code == 0, result.output
    assert load_npz(io.BytesIO(result.stdout_bytes)).shape == (30, 30)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["en.npy", "en.npy.json"]


@pytest.mark.parametrize("command", [
    ["preprocess", ENGLISH, "-l", "en", "-q", *MODEL],
    ["mine", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY, "--trg-embeddings", ENGLISH_NPY],
    ["score", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY, "--trg-embeddings", ENGLISH_NPY,
     "-q"],
    ["dedup", ENGLISH, "--embeddings", ENGLISH_NPY, "-q"],
], ids=["preprocess", "mine", "score", "dedup"])
def test_dash_is_standard_output_for_text_outputs(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    assert run(*command, "-o", tmp_path / "out").exit_code == 0
    result = run(*command, "-o", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (tmp_path / "out").read_bytes()
    assert not (tmp_path / "-").exists()


def test_help_of_every_writing_command_says_what_dash_means():
    for command in (["embed"], ["preprocess"], ["knn", "build"], ["knn", "graph"],
                    ["knn", "search"], ["mine"], ["score"], ["dedup"], ["paraphrase"],
                    ["filter", "score"], ["classify", "predict"]):
        help_text = " ".join(run(*command, "--help").output.split())
        assert "'-': standard output" in help_text or "'-': the" in help_text, command


def test_work_folders_of_a_stream_output_go_to_the_temp_directory(tmp_path):
    from laser.distributed.ray_runner import default_work_dir
    from laser.search.inputs import work_dir
    null = device(tmp_path / "null", 3)
    for output in ("-", str(null)):
        assert default_work_dir(output).parent == Path(tempfile.gettempdir())
        assert work_dir(output) is None  # the system temp directory
    assert default_work_dir(str(tmp_path / "out.npy")) == tmp_path / ".out.npy.shards"
