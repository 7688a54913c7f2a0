"""Requests whose clients go away before their sentences are embedded leave the queue unembedded:
100 requests queued behind a long one, their connections closed, are never encoded; /metrics
counts them and the queue is empty again. A real server on a loopback port, raw sockets."""
from __future__ import annotations

import json
import re
import socket
import threading
import time

import pytest
import requests

from serving.conftest import start_server

ABANDONED = 100
LONG_SENTENCES = 32
LONG_CHARS = 8_000  # each sentence of the long request: about 2,400 subword tokens, all its own
# batch (0.2-0.8 s each on the development machine, whether idle or busy)


@pytest.fixture(scope="module")
def roomy_server(serving_dir):
    running = start_server(serving_dir, "--max-chars", str(LONG_CHARS), "--max-queued", "4096")
    yield running
    running.stop()


def metric(server, name: str, labels: str = "") -> float:
    pattern = rf"^{re.escape(name)}{re.escape(labels)} (\S+)$"
    found = re.search(pattern, server.get("/metrics").text, re.M)
    return float(found.group(1)) if found else 0.0


def wait_for(condition, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def embed_request(server, sentence: str) -> bytes:
    body = json.dumps({"inputs": [sentence]}).encode()
    host = server.url.removeprefix("http://")
    return (f"POST /embed HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def test_requests_abandoned_in_the_queue_are_never_embedded(roomy_server):
    server = roomy_server
    long = ["The cat sleeps on the sofa all afternoon, " * (LONG_CHARS // 43)] * LONG_SENTENCES
    answers = []
    first = threading.Thread(target=lambda: answers.append(
        requests.post(server.url + "/embed", json={"inputs": long}, timeout=600)))
    first.start()
    wait_for(lambda: metric(server, "laser_queue_sentences") >= LONG_SENTENCES)
    host, port = server.url.removeprefix("http://").split(":")
    clients = []
    for number in range(ABANDONED):
        client = socket.create_connection((host, int(port)))
        client.sendall(embed_request(server, f"Sentence number {number}."))
        clients.append(client)
    wait_for(lambda: metric(server, "laser_queue_sentences") == LONG_SENTENCES + ABANDONED)
    for client in clients:
        client.close()
    assert first.is_alive(), "the long request ended before the others were abandoned"
    first.join(timeout=300)
    assert answers[0].status_code == 200 and len(answers[0].json()) == LONG_SENTENCES
    wait_for(lambda: metric(server, "laser_requests_total", '{endpoint="/embed",status="499"}')
             == ABANDONED)
    wait_for(lambda: metric(server, "laser_abandoned_sentences_total") == ABANDONED)
    assert metric(server, "laser_batch_sentences_sum") == LONG_SENTENCES  # fewer than sent
    assert metric(server, "laser_queue_sentences") == 0
    assert server.post("/embed", {"inputs": "Still serving."}).status_code == 200
