"""Binary outputs refused on a terminal, as gzip refuses: `laser embed x.txt -o -` run in a real
pseudo-terminal prints one error line and no bytes there; text outputs still reach it, and
binary outputs still go to pipes."""
from __future__ import annotations

import os
import pty
import subprocess
import sys

import numpy as np
import pytest

from conftest import PARITY, PARITY_MODEL

ENGLISH = PARITY / "inputs" / "en.txt"
ENGLISH_NPY = PARITY / "expected" / "en.npy"


def on_terminal(*args) -> tuple[int, bytes, str]:
    """Exit status, what reached the terminal (stdout) and stderr of `laser ARGS` run with its
    standard output on a pseudo-terminal."""
    main, terminal = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "laser", *map(str, args)], stdout=terminal,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    _, errors = child.communicate(timeout=300)
    return child.returncode, shown, errors.decode()


@pytest.mark.parametrize("args, what", [
    (["embed", ENGLISH, "--lang", "en", "--model", PARITY_MODEL, "-o", "-"], "embeddings (npy)"),
    (["embed", ENGLISH, "--lang", "en", "--model", PARITY_MODEL, "-o", "-", "--format", "raw"],
     "embeddings (raw)"),
    (["knn", "build", ENGLISH_NPY, "-o", "-"], "FAISS indexes"),
], ids=["npy", "raw", "index"])
def test_binary_output_to_a_terminal_is_refused(args, what):
    code, shown, errors = on_terminal(*args)
    assert code == 1
    assert errors.splitlines() == [
        f"laser: error: standard output is a terminal, and {what} are binary: redirect them "
        "(laser ... > FILE, or | another command) or give -o FILE"]
    assert shown == b""


def test_text_output_still_reaches_the_terminal():
    code, shown, errors = on_terminal("preprocess", ENGLISH, "--lang", "en", "--model",
                                      PARITY_MODEL, "-o", "-")
    assert code == 0, errors
    assert len(shown.splitlines()) == len(ENGLISH.read_text(encoding="utf-8").splitlines())


def test_binary_output_still_goes_to_a_pipe(tmp_path):
    done = subprocess.run([sys.executable, "-m", "laser", "embed", str(ENGLISH), "--lang", "en",
                           "--model", str(PARITY_MODEL), "-o", "-", "-q"], capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    (tmp_path / "piped.npy").write_bytes(done.stdout)
    assert np.load(tmp_path / "piped.npy").shape == np.load(ENGLISH_NPY).shape
