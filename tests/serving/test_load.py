"""Under load: concurrent clients get the rows they would get alone, gathered into shared encoder
calls; a flood past the queue limit is refused with 429 and the server recovers; SIGTERM lets the
requests in flight finish and the server exit 0. Bounded request counts, loopback only."""
from __future__ import annotations

import random
import re
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import requests

from serving.conftest import PARITY2_MODEL, start_server

POOL = ["Hello world.", "The book is on the table.", "Where is the train station?",
        "I like green tea very much.", "The cat sleeps on the sofa all afternoon.",
        "It is raining today, so we stay at home.", "Numbers like 3.14 and 42 are fine.",
        "A much longer sentence that goes on and on about nothing in particular, with commas, "
        "clauses and a few more words at the end of it."]
QUEUE_LIMIT = 24


@pytest.fixture(scope="module")
def loaded_server(serving_dir, index_path):
    """Two named models, a small queue and a small token budget."""
    running = start_server(serving_dir, "--model", "default", "--model", f"parity2={PARITY2_MODEL}",
                           "--index", str(index_path), "--max-queued", str(QUEUE_LIMIT),
                           "--max-inputs", "8", "--max-tokens", "256")
    yield running
    running.stop()


def batches_so_far(server) -> float:
    return float(re.search(r"^laser_batch_requests_count (\S+)$", server.get("/metrics").text,
                           re.M).group(1))


def test_concurrent_clients_get_the_rows_of_one_at_a_time(loaded_server, default_encoder):
    rng = random.Random(0)
    clients = QUEUE_LIMIT // 3  # at most 3 sentences each: never refused
    requests_sent = [rng.sample(POOL, rng.randint(1, 3)) for _ in range(3 * clients)]
    start = threading.Barrier(clients)
    before = batches_so_far(loaded_server)

    def client(batch: list[list[str]]) -> list:
        start.wait()
        return [loaded_server.post("/embed", {"inputs": sentences, "normalize": False})
                for sentences in batch]

    shares = [requests_sent[i::clients] for i in range(clients)]
    with ThreadPoolExecutor(clients) as pool:
        answers = [answer for answers in pool.map(client, shares) for answer in answers]
    order = [sentences for share in shares for sentences in share]
    for sentences, answer in zip(order, answers):
        assert answer.status_code == 200, answer.text
        np.testing.assert_allclose(answer.json(), default_encoder.encode(sentences, "en"),
                                   atol=1e-6)
    # some encoder calls embedded the sentences of several requests at once
    assert batches_so_far(loaded_server) - before < len(requests_sent)


def test_a_sentence_longer_than_the_token_budget_is_answered(loaded_server, default_encoder):
    long = " ".join(POOL * 4)  # several hundred tokens, past --max-tokens 256
    assert len(default_encoder.prepare([long], "en")[0]) > 256
    answer = loaded_server.post("/embed", {"inputs": [long, "Short."], "normalize": False})
    np.testing.assert_allclose(answer.json(), default_encoder.encode([long, "Short."], "en"),
                               atol=1e-6)


def test_flood_past_the_queue_limit_is_refused_and_the_server_recovers(loaded_server,
                                                                       default_encoder):
    sentences = [f"{POOL[-1]} Request {n}." for n in range(8)]
    start = threading.Barrier(40)

    def client(_) -> requests.Response:
        start.wait()
        return loaded_server.post("/embed", {"inputs": sentences, "normalize": False})

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(client, range(40)))
    statuses = [answer.status_code for answer in answers]
    assert set(statuses) == {200, 429}, statuses
    expected = default_encoder.encode(sentences, "en")
    for answer in answers:
        if answer.status_code == 429:
            assert answer.headers["Retry-After"] == "1"
            assert "--max-queued" in answer.json()["error"]["message"]
        else:
            np.testing.assert_allclose(answer.json(), expected, atol=1e-6)
    assert loaded_server.metric("laser_queue_peak_sentences") <= QUEUE_LIMIT
    assert loaded_server.metric("laser_queue_sentences") == 0
    assert loaded_server.post("/embed", {"inputs": sentences}).status_code == 200


def test_models_are_chosen_by_name(loaded_server, default_encoder):
    from laser import Encoder
    parity2 = Encoder.load(str(PARITY2_MODEL))
    for name, encoder in (("default", default_encoder), ("parity2", parity2)):
        answer = loaded_server.post("/v1/embeddings", {"model": name, "input": POOL[:3]})
        rows = [item["embedding"] for item in answer.json()["data"]]
        np.testing.assert_allclose(rows, encoder.encode(POOL[:3], "en"), atol=1e-6)
    first = loaded_server.post("/embed", {"inputs": POOL[:2], "normalize": False}).json()
    np.testing.assert_allclose(first, default_encoder.encode(POOL[:2], "en"), atol=1e-6)


def test_search_refuses_queries_of_another_model(loaded_server):
    refused = loaded_server.post("/search", {"queries": "Hello", "model": "parity2"})
    assert refused.status_code == 409
    assert refused.json()["error"]["type"] == "model_mismatch"
    assert loaded_server.post("/search", {"queries": "Hello", "model": "default"}).status_code == 200


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_finishes_requests_in_flight_and_exits_0(serving_dir, default_encoder, stop):
    server = start_server(serving_dir)
    heavy = [" ".join([POOL[-1]] * 12) + f" {n}" for n in range(8)]  # about 1,600 characters each
    with ThreadPoolExecutor(6) as pool:
        pending = [pool.submit(server.post, "/embed", {"inputs": heavy, "normalize": False})
                   for _ in range(6)]
        while server.metric("laser_queue_peak_sentences") < len(heavy) * len(pending):
            assert not any(future.done() for future in pending), "answered before all were sent"
        assert server.metric("laser_queue_sentences") > 0
        exit_code = server.stop(stop)
        answers = [future.result() for future in pending]
    assert exit_code == 0
    assert [answer.status_code for answer in answers] == [200] * 6
    expected = default_encoder.encode(heavy, "en")
    for answer in answers:
        np.testing.assert_allclose(answer.json(), expected, atol=1e-6)
    assert "laser: stopped" in server.log.read_text()
