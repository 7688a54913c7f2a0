"""The batcher on its own, with a real encoder: rows, failures and shutdown, whatever the mix."""
import gc
import random
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from laser import Encoder
from laser.errors import LaserError
from laser.serving.batching import Batcher, QueueFull, ShuttingDown
from laser.serving.metrics import Metrics

from conftest import PARITY, PARITY_MODEL, read_fixture_lines


@pytest.fixture
def batcher():
    running = Batcher(max_queued=10_000, metrics=Metrics(), threads=2)
    running.start()
    yield running
    running.close()


def requests_of_mixed_lengths(count: int) -> list[list[str]]:
    lines = read_fixture_lines(PARITY / "inputs" / "batching_fr.txt")
    rng = random.Random(3)
    return [rng.sample(lines, rng.randint(1, 8)) for _ in range(count)]


def test_concurrent_requests_get_their_own_rows_in_order(encoder, batcher):
    requests = requests_of_mixed_lengths(120)
    with ThreadPoolExecutor(16) as clients:
        futures = list(clients.map(lambda sentences: batcher.submit(encoder, sentences, "fr"),
                                   requests))
    for sentences, future in zip(requests, futures):
        embedded = future.result(timeout=120)
        assert np.abs(embedded.rows - encoder.encode(sentences, "fr")).max() <= 1e-6
        assert embedded.tokens == sum(map(len, encoder.prepare(sentences, "fr")))
    sentences = batcher.metrics.batch_sentences
    assert sentences.total == sum(map(len, requests)) and sentences.count < sentences.total


def test_a_request_that_cannot_be_prepared_fails_alone(encoder, batcher):
    good = batcher.submit(encoder, ["Une phrase.", "Et une autre."], "fr")
    bad = batcher.submit(encoder, ["Une phrase."], " ")
    with pytest.raises(LaserError, match="lang must be"):
        bad.result(timeout=60)
    assert good.result(timeout=60).rows.shape == (2, encoder.dim)


def test_close_finishes_what_is_queued_then_refuses(encoder):
    batcher = Batcher(max_queued=10_000, metrics=Metrics(), threads=2)
    batcher.start()
    futures = [batcher.submit(encoder, sentences, "fr")
               for sentences in requests_of_mixed_lengths(30)]
    batcher.close()
    assert all(future.result(timeout=0).rows.shape[1] == encoder.dim for future in futures)
    with pytest.raises(ShuttingDown):
        batcher.submit(encoder, ["Trop tard."], "fr")


def test_a_model_no_longer_used_is_not_kept(batcher):
    # the server drops models from its cache; the batcher must not keep them loaded
    encoder = Encoder.load(str(PARITY_MODEL))
    assert batcher.submit(encoder, ["Une phrase."], "fr").result(timeout=60).rows.shape[0] == 1
    dropped = weakref.ref(encoder)
    del encoder
    gc.collect()
    assert dropped() is None


def test_a_queue_of_n_sentences_takes_n_and_refuses_one_more(encoder):
    # not started: nothing leaves the queue while the test fills it
    batcher = Batcher(max_queued=3, metrics=Metrics(), threads=1)
    batcher.submit(encoder, ["Un.", "Deux.", "Trois."], "fr")
    assert batcher.metrics.queued == 3
    with pytest.raises(QueueFull):
        batcher.submit(encoder, ["Quatre."], "fr")
    with pytest.raises(QueueFull):
        Batcher(max_queued=3, metrics=Metrics(), threads=1).submit(encoder, ["a", "b", "c", "d"],
                                                                   "fr")


def eventually(condition, seconds: float = 60) -> bool:
    """Whether `condition()` holds within `seconds` (a Future's callbacks run just after the
    waiters wake)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_a_failed_request_frees_its_places_in_the_queue(encoder, batcher):
    with pytest.raises(LaserError):
        batcher.submit(encoder, ["Une phrase.", "Et une autre."], " ").result(timeout=60)
    assert eventually(lambda: batcher.metrics.queued == 0)
    assert "\nlaser_queue_sentences 0\n" in batcher.metrics.text()
    assert batcher.metrics.peak_queued == 2


def test_an_abandoned_request_frees_its_places_and_is_never_embedded(encoder):
    metrics = Metrics()
    batcher = Batcher(max_queued=10, metrics=metrics, threads=1)
    abandoned = batcher.submit(encoder, ["Un.", "Deux."], "fr")
    assert abandoned.cancel() and metrics.queued == 0
    kept = batcher.submit(encoder, ["Trois."], "fr")
    batcher.start()
    assert kept.result(timeout=60).rows.shape == (1, encoder.dim)
    batcher.close()
    assert metrics.abandoned_sentences == 2 and metrics.batch_sentences.total == 1
    assert eventually(lambda: metrics.queued == 0)
