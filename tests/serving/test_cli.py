"""`laser serve`'s own refusals: one line on stderr and exit 1, before serving anything."""
from __future__ import annotations

import socket
import subprocess
import sys

from serving.conftest import server_environment


def serve(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "laser", "serve", *args], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env=server_environment(tmp_path))


def test_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve(tmp_path, "--port", str(port))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"laser: error: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_an_unknown_model_or_index_is_one_line(tmp_path):
    result = serve(tmp_path, "--model", "no-such-model", "--port", "0")
    assert result.returncode == 1 and "no-such-model" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    result = serve(tmp_path, "--index", str(tmp_path / "missing.index"), "--port", "0")
    assert result.returncode == 1 and "missing.index: no such index file" in result.stderr


def test_two_models_of_one_name_are_refused(tmp_path):
    result = serve(tmp_path, "--model", "default", "--model", "default", "--port", "0")
    assert result.returncode == 1 and "two models are called 'default'" in result.stderr


def test_a_queue_smaller_than_one_request_is_refused(tmp_path):
    result = serve(tmp_path, "--max-inputs", "64", "--max-queued", "10", "--port", "0")
    assert result.returncode == 1 and "--max-queued must be at least --max-inputs" in result.stderr
