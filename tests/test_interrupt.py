"""Ctrl-C stops the test suite: a SIGINT that lands in a `laser` command the tests run in their
own process (which says `laser: interrupted` and exits 130, as for a user) ends the run, and
every test leaves the signal handlers as it found them."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import PARITY, PARITY_MODEL, ROOT

SUITE = """
import signal
from pathlib import Path
from conftest import run_laser

def test_a_long_command(tmp_path_factory):
    source = Path({folder!r}) / "long.txt"
    source.write_text(Path({french!r}).read_text(encoding="utf-8") * 60, encoding="utf-8")
    result = run_laser("embed", source, "-o", Path({folder!r}) / "out.npy", "-l", "fr", "-q",
                       "--model", {model!r})
    assert result.exit_code == 0, result.output

def test_after_it():
    (Path({folder!r}) / "ran-after").touch()
"""


FOUND = {}  # the SIGHUP handler the first of the two tests below began with


def test_a_test_changes_a_handler():
    FOUND["handler"] = signal.getsignal(signal.SIGHUP)
    # as a command run here may (SIGTERM, SIGHUP): a handler of its own
    signal.signal(signal.SIGHUP, lambda signum, frame: None)


def test_the_next_test_finds_it_restored():
    assert signal.getsignal(signal.SIGHUP) is FOUND["handler"]


@pytest.mark.slow
def test_ctrl_c_in_a_command_run_in_process_stops_the_suite(tmp_path):
    suite = tmp_path / "test_suite.py"
    suite.write_text(SUITE.format(folder=str(tmp_path), french=str(PARITY / "inputs" /
                                                                   "batching_fr.txt"),
                                  model=str(PARITY_MODEL)), encoding="utf-8")
    # A child of a background job inherits an ignored SIGINT; a user's terminal gives the default.
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
         str(suite)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tests")},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".out.npy.*.tmp")):  # the command is writing its output
        assert child.poll() is None, child.stdout.read()
        assert time.monotonic() < deadline, "the command never started writing"
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    output = child.communicate(timeout=120)[0]
    assert child.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "interrupted (Ctrl-C)" in output
    assert not (tmp_path / "ran-after").exists()
