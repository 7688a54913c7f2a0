"""Dynamic batching: the sentences of concurrent requests embedded together, off the event loop.

Requests wait in one bounded queue (counted in sentences). A preparing thread turns each
request's sentences into token ids (the encoder's whole preprocessing); the encoding thread,
the only one that runs networks, gathers every prepared request waiting for the same model, up to
the model's token budget, and embeds them in one `Encoder.encode_ids` call: the length-sorted
batches under `max_tokens` that `laser embed` uses. Rows go back to each request in order.
Nothing waits for more requests to arrive: a request alone is embedded at once, and requests that
arrive while the encoder is busy are gathered for its next call.
"""
from __future__ import annotations

import queue
import sys
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..pipeline import GIL_SWITCH_SECONDS
from .metrics import Metrics

if TYPE_CHECKING:
    from .. import Encoder


@dataclass(frozen=True)
class Embedded:
    """The rows of one request's sentences, and how many subword tokens they were."""

    rows: np.ndarray
    tokens: int


class QueueFull(Exception):
    """The queue holds as many sentences as allowed: refuse the request (429)."""


class ShuttingDown(Exception):
    """The batcher is closed: refuse the request (503)."""


@dataclass
class Job:
    """One request's sentences on their way through the batcher."""

    encoder: Encoder
    sentences: list[str]
    lang: str
    result: Future = field(default_factory=Future)
    ids: Optional[list[list[int]]] = None

    @property
    def tokens(self) -> int:
        return sum(len(sequence) for sequence in self.ids or ())


_STOP = None  # put on a queue: the thread reading it ends


class Batcher:
    """The bounded queue and the two threads behind it (see the module docstring)."""

    def __init__(self, max_queued: int, metrics: Metrics):
        self.max_queued = max_queued
        self.metrics = metrics
        self._queued = 0  # sentences accepted and not yet answered
        self._lock = threading.Lock()
        self._closed = False
        self._incoming: queue.Queue = queue.Queue()
        self._prepared: queue.Queue = queue.Queue()
        self._threads = [threading.Thread(target=self._prepare_loop, name="laser-prepare",
                                          daemon=True),
                         threading.Thread(target=self._encode_loop, name="laser-encode",
                                          daemon=True)]
        self._switch_interval = sys.getswitchinterval()

    def start(self) -> None:
        # short GIL turns, as `laser embed` takes them: the event loop, the preparing thread and
        # the encoder each get the GIL back within half a millisecond
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        for thread in self._threads:
            thread.start()

    def close(self) -> None:
        """Finish the requests already queued, then stop both threads."""
        with self._lock:
            self._closed = True
        self._incoming.put(_STOP)
        for thread in self._threads:
            thread.join()
        sys.setswitchinterval(self._switch_interval)

    def submit(self, encoder: Encoder, sentences: list[str], lang: str) -> Future:
        """Queue sentences for embedding; a Future of their `Embedded`. QueueFull when the
        queue has no room for them, ShuttingDown once closed."""
        with self._lock:
            if self._closed:
                raise ShuttingDown()
            if self._queued + len(sentences) > self.max_queued:
                raise QueueFull()
            self._queued += len(sentences)
            self.metrics.queue_depth(self._queued)
        job = Job(encoder, sentences, lang)
        job.result.add_done_callback(lambda _: self._release(len(sentences)))
        self._incoming.put(job)
        return job.result

    def _release(self, sentences: int) -> None:
        with self._lock:
            self._queued -= sentences
            self.metrics.queue_depth(self._queued)

    def _prepare_loop(self) -> None:
        while (job := self._incoming.get()) is not _STOP:
            try:
                job.ids = job.encoder.prepare(job.sentences, job.lang)
            except Exception as error:  # LaserError: a 422; anything else: a 500
                job.result.set_exception(error)
                continue
            self._prepared.put(job)
        self._prepared.put(_STOP)

    def _encode_loop(self) -> None:
        stopping = False
        while not stopping:
            first = self._prepared.get()
            if first is _STOP:
                return
            jobs, stopping = self._gather(first)
            for group in _by_encoder(jobs):
                self._encode(group)

    def _gather(self, first: Job) -> tuple[list[Job], bool]:
        """`first` and the prepared jobs behind it, up to the token budget of its encoder."""
        jobs, tokens = [first], first.tokens
        budget = first.encoder.max_tokens
        while tokens < budget:
            try:
                job = self._prepared.get_nowait()
            except queue.Empty:
                break
            if job is _STOP:
                return jobs, True
            jobs.append(job)
            tokens += job.tokens
        return jobs, False

    def _encode(self, jobs: list[Job]) -> None:
        """One `encode_ids` call over the jobs of one encoder; each job gets its rows."""
        sequences = [sequence for job in jobs for sequence in job.ids]
        try:
            rows = jobs[0].encoder.encode_ids(sequences)
        except Exception as error:
            for job in jobs:
                job.result.set_exception(error)
            return
        self.metrics.batch(len(jobs), len(sequences))
        start = 0
        for job in jobs:
            end = start + len(job.ids)
            job.result.set_result(Embedded(rows[start:end], job.tokens))
            start = end


def _by_encoder(jobs: list[Job]) -> list[list[Job]]:
    """Jobs grouped by the encoder that embeds them, in order of first appearance."""
    groups: dict[int, list[Job]] = {}
    for job in jobs:
        groups.setdefault(id(job.encoder), []).append(job)
    return list(groups.values())
