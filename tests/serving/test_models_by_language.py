"""Without --model, each request's language picks its model as `laser embed` does: the official
model when it is downloaded in $LASER_HOME (the LASER2 parity model stands in for laser2, served
to `laser download` by a real HTTP server on 127.0.0.1), else the shipped default."""
from __future__ import annotations

import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from click.testing import CliRunner

from laser.cli import main

from serving.conftest import PARITY2_MODEL, start_server

SENTENCES = ["Das Buch liegt auf dem Tisch.", "Wo ist der Bahnhof?"]


@pytest.fixture
def laser2_downloaded(tmp_path):
    """$LASER_HOME of `start_server(tmp_path)` holding laser2, downloaded by `laser download`."""
    mirror = tmp_path / "mirror" / "nllb" / "laser"
    mirror.mkdir(parents=True)
    for source, name in (("encoder.pt", "laser2.pt"), ("encoder.spm", "laser2.spm"),
                         ("encoder.cvocab", "laser2.cvocab")):
        shutil.copy(PARITY2_MODEL / source, mirror / name)
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "mirror"))
    handler.log_message = lambda *args: None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        result = CliRunner().invoke(main, ["download", "laser2", "-q", "--base-url",
                                           f"http://127.0.0.1:{httpd.server_address[1]}"],
                                    env={"LASER_HOME": str(tmp_path / "laser-home")})
        assert result.exit_code == 0, result.output
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_downloaded_official_model_answers_its_languages_from_a_bounded_cache(tmp_path, laser2_downloaded,
                                                           default_encoder):
    from laser import Encoder
    laser2 = Encoder.load(str(PARITY2_MODEL))
    server = start_server(tmp_path, "--max-models", "1")
    try:
        german = server.post("/embed", {"inputs": SENTENCES, "lang": "de", "normalize": False})
        np.testing.assert_allclose(german.json(), laser2.encode(SENTENCES, "de"), atol=1e-6)
        # Igbo's official model is LASER3's, not downloaded: the shipped default answers
        igbo = server.post("/embed", {"inputs": SENTENCES, "lang": "ig", "normalize": False})
        np.testing.assert_allclose(igbo.json(), default_encoder.encode(SENTENCES, "ig"),
                                   atol=1e-6)
        named = server.post("/v1/embeddings", {"model": "default", "input": SENTENCES,
                                               "lang": "de"})
        np.testing.assert_allclose([item["embedding"] for item in named.json()["data"]],
                                   default_encoder.encode(SENTENCES, "de"), atol=1e-6)
        # a cache of one model: laser2 was dropped for the default, and is loaded again
        info = server.get("/info").json()
        assert [model["name"] for model in info["models"]] == ["default"]
        assert info["model_choice"] == "by-language" and info["model_cache_size"] == 1
        again = server.post("/embed", {"inputs": SENTENCES, "lang": "de", "normalize": False})
        np.testing.assert_allclose(again.json(), laser2.encode(SENTENCES, "de"), atol=1e-6)
        assert [model["name"] for model in server.get("/info").json()["models"]] == ["laser2"]
    finally:
        assert server.stop() == 0
