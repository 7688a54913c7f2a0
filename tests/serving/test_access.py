"""Who may call the server and what every answer carries: API keys from the three places they can
come from, the paths that stay open, X-Request-Id in the answers and the access log, CORS, and the
warning of a server open to the network without a key. Real servers on loopback ports."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import requests

from laser.serving.auth import ApiKeys, open_to_network
from laser.serving.exchange import MAX_REQUEST_ID

from serving.conftest import server_environment, start_server

KEYS = ("key-from-option", "key-from-file", "key-from-environment")
ORIGIN = "http://app.example"


@pytest.fixture(scope="module")
def keyed(serving_dir):
    """Keys from --api-key, --api-key-file and $LASER_API_KEY; a JSON access log; one origin."""
    key_file = serving_dir / "keys.txt"
    key_file.write_text(f"# our keys\n\n{KEYS[1]}\n", encoding="utf-8")
    running = start_server(serving_dir, "--api-key", KEYS[0], "--api-key-file", str(key_file),
                           "--access-log", "--access-log-format", "json", "--cors-origin", ORIGIN,
                           key=KEYS[0], environment={"LASER_API_KEY": KEYS[2]})
    yield running
    running.stop()


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize("path", ["/info", "/v1/models", "/metrics"])
def test_without_a_valid_key_the_answer_is_401_json(keyed, path):
    for headers in ({}, bearer("wrong"), {"Authorization": f"Basic {KEYS[0]}"}, bearer("")):
        answer = keyed.get(path, headers=headers)
        assert answer.status_code == 401, (path, headers)
        assert answer.headers["WWW-Authenticate"] == "Bearer"
        assert answer.json()["error"] == {
            "message": "send a valid API key: Authorization: Bearer KEY",
            "type": "authentication_error", "code": 401}


@pytest.mark.parametrize("key", KEYS)
def test_each_key_opens_every_endpoint(keyed, key, default_encoder):
    assert keyed.get("/info", headers=bearer(key)).status_code == 200
    rows = keyed.post("/embed", {"inputs": ["Hello world."], "normalize": False},
                      headers=bearer(key)).json()
    np.testing.assert_allclose(rows, default_encoder.encode(["Hello world."], "en"), atol=1e-6)


def test_embedding_at_the_root_needs_a_key_and_the_page_does_not(keyed):
    assert requests.post(keyed.url + "/", json={"inputs": "Hello."}, timeout=60).status_code == 401
    assert keyed.post("/", {"inputs": "Hello."}).status_code == 200
    for path in ("/", "/health", "/openapi.json"):
        assert keyed.get(path, headers={}).status_code == 200, path


def test_the_openai_client_with_the_key_works_and_a_wrong_key_gets_401(keyed, default_encoder):
    import openai
    client = openai.OpenAI(base_url=keyed.url + "/v1", api_key=KEYS[1], max_retries=0)
    answer = client.embeddings.create(model="default", input=["Hello world."])
    np.testing.assert_allclose([answer.data[0].embedding],
                               default_encoder.encode(["Hello world."], "en"), atol=1e-6)
    wrong = openai.OpenAI(base_url=keyed.url + "/v1", api_key="not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as refused:
        wrong.embeddings.create(model="default", input=["Hello world."])
    assert refused.value.status_code == 401


def test_keys_are_compared_whole():
    keys = ApiKeys.of(["secret"])
    assert keys.allow(b"Bearer secret") and keys.allow(b"bearer secret")
    for header in (b"Bearer secre", b"Bearer secret2", b"Bearer", b"secret", None, b"Token secret"):
        assert not keys.allow(header), header
    assert ApiKeys().allow(None)  # a server without keys


def _logged_until(log, request_id: str, seconds: float = 30.0) -> dict:
    """The access log's JSON entries by request id, once `request_id` is among them: the server
    writes an entry after its answer has gone out, so a loaded machine may lag."""
    deadline = time.monotonic() + seconds
    while True:
        logged = [json.loads(line) for line in log.read_text().splitlines()
                  if line.startswith("{")]
        by_id = {entry["request_id"]: entry for entry in logged}
        if request_id in by_id or time.monotonic() > deadline:
            return by_id
        time.sleep(0.05)


def test_a_request_id_is_echoed_or_made_and_logged(keyed):
    sent = keyed.get("/info", headers={**bearer(KEYS[0]), "X-Request-Id": "trace-42"})
    assert sent.headers["X-Request-Id"] == "trace-42"
    longest = "x" * MAX_REQUEST_ID  # the longest kept: one character more is replaced
    assert keyed.get("/health", headers={"X-Request-Id": longest}).headers["X-Request-Id"] == \
        longest
    made = keyed.get("/health").headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    for unusable in ("has space", "x" * (MAX_REQUEST_ID + 1)):
        replaced = keyed.get("/health", headers={"X-Request-Id": unusable})
        assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["X-Request-Id"])
    refused = keyed.get("/info", headers={"X-Request-Id": "trace-43"})
    assert refused.status_code == 401 and refused.headers["X-Request-Id"] == "trace-43"
    by_id = _logged_until(keyed.log, "trace-43")
    assert by_id["trace-42"]["status"] == 200 and by_id["trace-42"]["path"] == "/info"
    assert by_id["trace-43"]["status"] == 401 and by_id[made]["path"] == "/health"


def test_cors_lets_the_origin_in_and_no_other(keyed):
    preflight = requests.options(keyed.url + "/v1/embeddings", timeout=60, headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert preflight.headers["Access-Control-Allow-Methods"] == "POST"
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    answer = keyed.post("/embed", {"inputs": "Hello."},
                        headers={**bearer(KEYS[0]), "Origin": ORIGIN})
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "X-Request-Id" in answer.headers["Access-Control-Expose-Headers"]
    other = keyed.post("/embed", {"inputs": "Hello."},
                       headers={**bearer(KEYS[0]), "Origin": "http://elsewhere.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    assert requests.options(keyed.url + "/embed", headers={"Origin": "http://elsewhere.example"},
                            timeout=60).status_code == 401


def test_open_metrics_opens_metrics_only(serving_dir):
    running = start_server(serving_dir, "--api-key", "k", "--open-metrics", "--access-log")
    try:
        assert running.get("/metrics").status_code == 200
        assert running.get("/info").status_code == 401
        line = [line for line in running.log.read_text().splitlines() if "/metrics" in line][0]
        assert re.search(r'"GET /metrics" 200 [0-9.]+ms sentences=0 request_id=[0-9a-f]{32}$',
                         line)
    finally:
        running.stop()


def serve(tmp_path, *args: str, environment: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "laser", "serve", *args], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path,
                          env={**server_environment(tmp_path), **(environment or {})})


def test_open_to_the_network_without_a_key_is_a_one_line_warning(tmp_path):
    with socket.socket() as taken:  # the server never listens: its port is taken
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        warned = serve(tmp_path, "--host", "0.0.0.0", "--port", port)
        keyed = serve(tmp_path, "--host", "0.0.0.0", "--port", port,
                      environment={"LASER_API_KEY": "k"})
    warning = ("laser: warning: listening on 0.0.0.0 without --api-key: anyone who can reach "
               "this machine can use the server")
    assert warned.stderr.splitlines()[0] == warning
    assert warned.returncode == keyed.returncode == 1 and "warning" not in keyed.stderr
    assert [open_to_network(host) for host in ("127.0.0.1", "::1", "localhost", "0.0.0.0",
                                               "::", "192.168.1.5", "example.com")] == \
        [False, False, False, True, True, True, True]


def test_a_key_file_without_keys_or_missing_is_one_line(tmp_path):
    empty = tmp_path / "keys.txt"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    for path, message in ((empty, "no key in it"), (tmp_path / "none.txt", "No such file")):
        result = serve(tmp_path, "--api-key-file", str(path), "--port", "0")
        assert result.returncode == 1 and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    spaced = serve(tmp_path, "--api-key", "two words", "--port", "0")
    assert spaced.returncode == 1 and "printable ASCII without spaces" in spaced.stderr
    empty_key = serve(tmp_path, "--api-key", "", "--port", "0")
    assert empty_key.returncode == 1 and "an API key is empty" in empty_key.stderr
