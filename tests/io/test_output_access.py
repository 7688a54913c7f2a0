"""Writing an output never widens access to it: a replaced file keeps its mode (and its group,
and for root its owner), a new one gets 0666 less the umask as `open` gives it, and a file
whose mode bits deny us writing it (0444) is refused in one line and left as it was. Run as
the user running the tests, and, where that is root, again as `nobody` in a forked child that
dropped root (a fork, not a new interpreter: it needs no access to where Python lives)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from conftest import (NOBODY, PARITY, PARITY_MODEL, as_nobody, laser_ok, one_error_line,
                      run_laser)

ENGLISH = PARITY / "inputs" / "en.txt"
ENGLISH_NPY = PARITY / "expected" / "en.npy"
USERS = 100  # a group `nobody` is made a member of in the child
ROOT_GROUP = 0  # a group it is not


def build_index(source: Path, output: Path):
    return run_laser("knn", "build", source, "-q", "-o", output)


def mine(output: Path):
    return run_laser("mine", ENGLISH, ENGLISH, "--src-embeddings", ENGLISH_NPY,
                     "--trg-embeddings", ENGLISH_NPY, "-o", output)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def existing(path: Path, permissions: int, group: int | None = None) -> Path:
    path.write_text("old\n", encoding="utf-8")
    if group is not None:
        os.chown(path, -1, group)
    os.chmod(path, permissions)
    return path


def settable_group() -> int:
    """A group this process may give its files other than the one they get by default."""
    if os.geteuid() == 0:
        return USERS
    others = [gid for gid in os.getgroups() if gid != os.getegid()]
    return others[0] if others else os.getegid()


@pytest.fixture
def umask():
    """Set the umask for the test (restored after)."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


@pytest.mark.parametrize("permissions", [0o600, 0o640, 0o604, 0o660], ids=oct)
def test_a_replaced_output_keeps_its_mode_and_group(tmp_path, permissions):
    group = settable_group()
    outputs = [existing(tmp_path / "out.index", permissions, group),
               existing(tmp_path / "out.index.json", permissions, group),
               existing(tmp_path / "pairs.tsv", permissions, group)]
    owners = [os.stat(path).st_uid for path in outputs]
    assert build_index(ENGLISH_NPY, tmp_path / "out.index").exit_code == 0
    assert mine(tmp_path / "pairs.tsv").exit_code == 0
    for path, owner in zip(outputs, owners):
        assert path.read_bytes() != b"old\n"
        assert (mode(path), os.stat(path).st_gid, os.stat(path).st_uid) == \
            (permissions, group, owner), path


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another owner")
def test_root_keeps_the_owner_of_a_replaced_output(tmp_path):
    output = existing(tmp_path / "out.index", 0o640)
    os.chown(output, NOBODY, USERS)
    assert build_index(ENGLISH_NPY, output).exit_code == 0
    assert (os.stat(output).st_uid, os.stat(output).st_gid, mode(output)) == (NOBODY, USERS,
                                                                              0o640)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664),
                                            (0o077, 0o600)], ids=["022", "027", "002", "077"])
def test_a_new_output_gets_0666_less_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    assert build_index(ENGLISH_NPY, tmp_path / "out.index").exit_code == 0
    assert mine(tmp_path / "pairs.tsv").exit_code == 0
    laser_ok("embed", ENGLISH, "-o", tmp_path / "en.npy", "-l", "en", "-q", "--model",
             PARITY_MODEL)
    for name in ("out.index", "out.index.json", "pairs.tsv", "en.npy", "en.npy.json"):
        assert mode(tmp_path / name) == expected, name


def untouched(path: Path) -> tuple:
    status = os.stat(path)
    return path.read_bytes(), status.st_mode, status.st_mtime_ns, status.st_ino


@pytest.mark.parametrize("permissions", [0o444, 0o400, 0o555], ids=oct)
@pytest.mark.parametrize("command", [
    lambda out: build_index(ENGLISH_NPY, out),
    mine,
    lambda out: run_laser("embed", ENGLISH, "-o", out, "-l", "en", "-q", "--model",
                          PARITY_MODEL),
], ids=["index", "mined-pairs", "embeddings"])
def test_a_read_only_output_is_refused_and_left_as_it_was(tmp_path, command, permissions):
    output = existing(tmp_path / "out", permissions)
    before = untouched(output)
    line = one_error_line(command(output))
    assert line == (f"laser: error: {output}: read-only (mode {permissions:04o}), not replaced; "
                    "make it writable or write elsewhere")
    assert untouched(output) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("command", ["index", "embeddings"])
def test_a_read_only_sidecar_is_refused_before_its_output_is_replaced(tmp_path, command):
    output = existing(tmp_path / "out", 0o644)
    sidecar = existing(tmp_path / "out.json", 0o444)
    before = untouched(output), untouched(sidecar)
    result = (build_index(ENGLISH_NPY, output) if command == "index" else
              run_laser("embed", ENGLISH, "-o", output, "-l", "en", "-q", "--model",
                        PARITY_MODEL))
    assert f"{sidecar}: read-only (mode 0444), not replaced" in one_error_line(result)
    assert (untouched(output), untouched(sidecar)) == before


@pytest.fixture
def shared_dir():
    """A folder `nobody` may write in, holding a copy of the embeddings to index (the test's
    own tmp_path is root's alone)."""
    directory = Path(tempfile.mkdtemp(prefix="laser-access-"))
    directory.chmod(0o777)
    shutil.copyfile(ENGLISH_NPY, directory / "en.npy")
    (directory / "en.npy").chmod(0o644)
    assert build_index(directory / "en.npy", directory / "warm.index").exit_code == 0
    yield directory
    shutil.rmtree(directory)


def outcome_of(result) -> tuple[int, str]:
    return result.exit_code, result.stderr


def test_as_nobody_a_replaced_output_keeps_its_mode_and_a_group_it_may_set(shared_dir):
    kept = existing(shared_dir / "kept.index", 0o640, USERS)
    narrowed = existing(shared_dir / "narrowed.index", 0o640, ROOT_GROUP)
    for path in (kept, narrowed):
        os.chown(path, NOBODY, -1)
    source = shared_dir / "en.npy"
    results = as_nobody(lambda: [outcome_of(build_index(source, path))
                                 for path in (kept, narrowed)], groups=(USERS,))
    assert results == [(0, ""), (0, "")]
    assert (os.stat(kept).st_uid, os.stat(kept).st_gid, mode(kept)) == (NOBODY, USERS, 0o640)
    # its group cannot be kept: the new group may do no more than others could
    assert (os.stat(narrowed).st_gid, mode(narrowed)) == (NOBODY, 0o600)


def test_as_nobody_a_new_output_gets_0666_less_the_umask(shared_dir):
    output = shared_dir / "new.index"

    def build_with_umask() -> tuple[int, str]:
        os.umask(0o027)
        return outcome_of(build_index(shared_dir / "en.npy", output))
    assert as_nobody(build_with_umask) == (0, "")
    assert (os.stat(output).st_uid, mode(output), mode(f"{output}.json")) == (NOBODY, 0o640,
                                                                             0o640)


def test_as_nobody_a_read_only_output_is_refused(shared_dir):
    own = existing(shared_dir / "own.index", 0o444)
    os.chown(own, NOBODY, NOBODY)
    roots = existing(shared_dir / "roots.index", 0o644)  # others may not write it
    before = untouched(own), untouched(roots)
    results = as_nobody(lambda: [outcome_of(build_index(shared_dir / "en.npy", path))
                                 for path in (own, roots)])
    assert results == [(1, f"laser: error: {path}: read-only (mode {permissions:04o}), not "
                           "replaced; make it writable or write elsewhere\n")
                       for path, permissions in ((own, 0o444), (roots, 0o644))]
    assert (untouched(own), untouched(roots)) == before


@pytest.mark.parametrize("command", ["index", "embeddings", pytest.param("graph", marks=(
    pytest.mark.skipif(importlib.util.find_spec("scipy") is None,
                       reason="laser knn graph needs scipy (not in the light install)")))])
def test_a_new_sidecar_gets_the_mode_and_group_of_its_output(tmp_path, umask, command):
    """A private output gets a private record: 0600 beside 0600 (not 0644 from the umask)."""
    group = settable_group()
    output = existing(tmp_path / "out", 0o600, group)
    result = (build_index(ENGLISH_NPY, output) if command == "index" else
              run_laser("knn", "graph", ENGLISH_NPY, "-k", "2", "-q", "-o", output)
              if command == "graph" else
              run_laser("embed", ENGLISH, "-o", output, "-l", "en", "-q", "--model",
                        PARITY_MODEL))
    assert result.exit_code == 0, result.output
    sidecar = tmp_path / "out.json"
    assert (mode(sidecar), os.stat(sidecar).st_gid) == (0o600, group)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another owner")
def test_root_gives_a_new_sidecar_the_owner_group_and_mode_of_a_nobody_output(tmp_path, umask):
    output = existing(tmp_path / "out.npy", 0o640)
    os.chown(output, NOBODY, USERS)
    laser_ok("embed", ENGLISH, "-o", output, "-l", "en", "-q", "--model", PARITY_MODEL)
    sidecar = tmp_path / "out.npy.json"
    assert [(os.stat(path).st_uid, os.stat(path).st_gid, mode(path))
            for path in (output, sidecar)] == [(NOBODY, USERS, 0o640)] * 2
