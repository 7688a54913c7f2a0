"""Real `laser serve` processes on free loopback ports, a `laser knn build` index for /search, and
the shipped default model loaded here to compare rows with."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
import requests
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
PARITY2_MODEL = ROOT / "tests" / "data" / "parity2" / "model"
INDEXED = ["Hello world.", "The book is on the table.", "Where is the train station?",
           "I like green tea.", "The cat sleeps on the sofa.", "It is raining today."]
START_SECONDS = 120


@dataclass
class Server:
    """A `laser serve` subprocess and its base URL."""

    process: subprocess.Popen
    url: str
    log: Path
    key: Optional[str] = None  # sent as `Authorization: Bearer KEY` unless headers are given

    def get(self, path: str, **kwargs) -> requests.Response:
        return requests.get(self.url + path, timeout=60, **self._authorized(kwargs))

    def post(self, path: str, body=None, **kwargs) -> requests.Response:
        return requests.post(self.url + path, json=body, timeout=60, **self._authorized(kwargs))

    def _authorized(self, kwargs: dict) -> dict:
        if self.key is None or "headers" in kwargs:
            return kwargs
        return {**kwargs, "headers": {"Authorization": f"Bearer {self.key}"}}

    def metric(self, name: str) -> float:
        """The value of an unlabelled metric from /metrics."""
        text = self.get("/metrics").text
        return float(re.search(rf"^{re.escape(name)} (\S+)$", text, re.M).group(1))

    def stop(self, stop: signal.Signals = signal.SIGTERM) -> int:
        """Send `stop` and wait for the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(stop)
        return self.process.wait(timeout=60)


def start_server(tmp: Path, *args: str, key: Optional[str] = None,
                 environment: Optional[dict] = None) -> Server:
    """`laser serve --port 0 ARGS` in a subprocess, once it answers /health; `key` is the API
    key the Server's calls send."""
    log = tmp / f"serve-{time.monotonic_ns()}.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "laser", "serve", "--port", "0", *args],
                                   stdout=subprocess.DEVNULL, stderr=stderr, cwd=tmp,
                                   env={**server_environment(tmp), **(environment or {})})
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = re.search(r"serving on (http://\S+)", log.read_text())
        if found:
            server = Server(process, found.group(1), log, key)
            if _healthy(server):
                return server
        if process.poll() is not None:
            raise RuntimeError(f"laser serve exited {process.returncode}: {log.read_text()}")
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"laser serve did not start in {START_SECONDS} s: {log.read_text()}")


def server_environment(tmp: Path) -> dict:
    """This checkout on the path, an empty download cache (the shipped model answers every
    language) and no $LASER_MODEL."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("LASER_MODEL", "LASER_API_KEY")}
    (tmp / "laser-home").mkdir(exist_ok=True)
    return {**env, "PYTHONPATH": str(ROOT), "LASER_HOME": str(tmp / "laser-home")}


def _healthy(server: Server) -> bool:
    try:
        return server.get("/health").status_code == 200
    except requests.ConnectionError:
        return False


@pytest.fixture(scope="session")
def serving_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("serving")


@pytest.fixture(scope="session")
def index_path(serving_dir) -> Path:
    """An index of INDEXED built by `laser knn build` with the shipped model (text recorded)."""
    from laser.cli import main
    text = serving_dir / "indexed.txt"
    text.write_text("".join(line + "\n" for line in INDEXED), encoding="utf-8")
    index = serving_dir / "sentences.index"
    result = CliRunner().invoke(main, ["knn", "build", str(text), "--lang", "en", "-o",
                                       str(index), "-q"])
    assert result.exit_code == 0, result.output
    return index


@pytest.fixture(scope="session")
def server(serving_dir, index_path):
    """The server as most users start it: models by language, one index, small limits."""
    running = start_server(serving_dir, "--index", str(index_path), "--max-body-bytes", "200000",
                           "--max-inputs", "16", "--max-chars", "300")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def default_encoder():
    from laser import Encoder
    return Encoder.load("default")
