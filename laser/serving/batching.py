"""Dynamic batching: the sentences of concurrent requests embedded together, off the event loop.

Requests wait in one bounded queue (counted in sentences). A preparing thread turns each
request's sentences into token ids (the encoder's whole preprocessing) and puts them among the
sentences waiting for that encoder, by length. Encoding threads, one per core, each take one
batch at a time: the oldest sentence waiting and those next to it in length that make the
cheapest batch per token (`laser.runtime.sequences.cheapest_batch`: padding, steps and the batch
itself priced as the runtime spends them), under the token budget of the encoder's batches. A
request is answered as soon as its last sentence is embedded. Nothing waits for a batch to fill:
a sentence alone is embedded at once, and the sentences that arrive while every thread is busy
are there to choose from when one is free.

A request abandoned before it is answered (its Future cancelled: the client went away) frees its
place in the queue at once; its sentences not yet embedded are dropped, never encoded.
"""
from __future__ import annotations

import itertools
import queue
import sys
import threading
from collections import deque
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..pipeline import GIL_SWITCH_SECONDS
from ..runtime.onnx_runtime import requested_threads, usable_cores
from ..runtime.sequences import cheapest_batch
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
    ids: list[list[int]] = field(default_factory=list)  # prepared: a Prepared (its encoders)
    rows: Optional[np.ndarray] = None
    left: int = 0  # sentences not yet embedded
    abandoned: bool = False  # its Future was cancelled: the request went away

    @property
    def tokens(self) -> int:
        return sum(len(sequence) for sequence in self.ids)

    def settle(self, rows: Optional[Embedded] = None,
               error: Optional[BaseException] = None) -> None:
        """Answer the request, unless it is answered already or was abandoned meanwhile."""
        try:
            if error is not None:
                self.result.set_exception(error)
            else:
                self.result.set_result(rows)
        except InvalidStateError:
            pass


# One sentence waiting: (arrival number, its job, its row in the job)
Waiting = tuple[int, Job, int]


class Backlog:
    """The sentences waiting for one encoder, by length, oldest first within a length."""

    def __init__(self, encoder: Encoder):
        self.encoder = encoder
        self.by_length: dict[int, deque[Waiting]] = {}
        self.count = 0
        self.running = 0  # its batches being encoded

    def add(self, arrival: int, job: Job, row: int) -> None:
        self.by_length.setdefault(len(job.ids[row]), deque()).append((arrival, job, row))
        self.count += 1

    def remove(self, job: Job) -> int:
        """Drop the sentences of `job` still waiting; how many there were."""
        removed = 0
        for length in {len(ids) for ids in job.ids}:
            waiting = self.by_length.get(length, deque())
            kept = deque(entry for entry in waiting if entry[1] is not job)
            removed += len(waiting) - len(kept)
            self.by_length[length] = kept
        self.count -= removed
        return removed

    @property
    def idle(self) -> bool:
        return not self.count and not self.running

    @property
    def ready(self) -> bool:
        return self.count > 0 and self.running < self.encoder.parallel_batches

    def oldest(self) -> tuple[int, int]:
        """The arrival number and length of the sentence that has waited longest."""
        return min((waiting[0][0], length) for length, waiting in self.by_length.items()
                   if waiting)

    def take_batch(self) -> tuple[list[Waiting], int]:
        """The oldest sentence and those `cheapest_batch` puts with it, longest first; and how
        many sentences of abandoned requests were dropped on the way."""
        first = self.oldest()[1]
        counts = {length: len(waiting) for length, waiting in self.by_length.items()}
        shortest, longest, count = cheapest_batch(counts, first, self.encoder.batch_tokens,
                                                  self.encoder.max_sentences)
        batch: list[Waiting] = []
        dropped = 0
        for length in sorted(counts, reverse=True):
            if shortest <= length <= longest:
                waiting = self.by_length[length]
                while waiting and len(batch) < count:
                    taken = waiting.popleft()
                    if taken[1].abandoned:
                        dropped += 1
                    else:
                        batch.append(taken)
        self.count -= len(batch) + dropped
        return batch, dropped


_STOP = None  # put on the incoming queue: the preparing thread ends, then the encoding threads


@dataclass(frozen=True)
class Purge:
    """Put on the incoming queue when a request is abandoned: drop its sentences still waiting."""

    job: Job


class Batcher:
    """The bounded queue and the threads behind it (see the module docstring)."""

    def __init__(self, max_queued: int, metrics: Metrics, threads: Optional[int] = None):
        self.max_queued = max_queued
        self.metrics = metrics
        self._queued = 0  # sentences accepted and not yet answered
        self._lock = threading.Lock()
        self._closed = False
        self._incoming: queue.SimpleQueue = queue.SimpleQueue()  # put: no Python-level lock
        self._backlog_changed = threading.Condition()  # guards the backlogs and the jobs' rows
        self._backlogs: dict[int, Backlog] = {}
        self._arrivals = itertools.count()
        self._prepared_all = False
        self._threads = [threading.Thread(target=self._prepare_loop, name="laser-prepare",
                                          daemon=True)]
        self._threads += [threading.Thread(target=self._encode_loop, name=f"laser-encode-{i}",
                                           daemon=True)
                          for i in range(threads or requested_threads() or usable_cores())]
        self._switch_interval = sys.getswitchinterval()

    def start(self) -> None:
        # short GIL turns, as `laser embed` takes them: the event loop, the preparing thread and
        # the encoders each get the GIL back within half a millisecond
        sys.setswitchinterval(GIL_SWITCH_SECONDS)
        for thread in self._threads:
            thread.start()

    def close(self) -> None:
        """Finish the requests already queued, then stop the threads."""
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
        job.result.add_done_callback(lambda _: self._release(job))
        self._incoming.put(job)
        return job.result

    def _release(self, job: Job) -> None:
        """A request answered, failed or abandoned: its places in the queue are free again (and
        the sentences of an abandoned one are dropped)."""
        with self._lock:
            self._queued -= len(job.sentences)
            self.metrics.queue_depth(self._queued)
        if job.result.cancelled():
            job.abandoned = True
            self._incoming.put(Purge(job))

    def _prepare_loop(self) -> None:
        # one request a call, so that no finished request (and its model) stays referenced
        # while the thread waits for the next
        while self._prepare_next():
            pass
        with self._backlog_changed:
            self._prepared_all = True
            self._backlog_changed.notify_all()

    def _prepare_next(self) -> bool:
        """Prepare the next request and queue its sentences; False at the end."""
        job = self._incoming.get()
        if job is _STOP:
            return False
        if isinstance(job, Purge):
            self._purge(job.job)
            return True
        if job.abandoned:
            self.metrics.abandoned(len(job.sentences))
            return True
        try:
            job.ids = job.encoder.prepare(job.sentences, job.lang)
        except Exception as error:  # LaserError: a 422; anything else: a 500
            job.settle(error=error)
            return True
        self._queue_for_encoding(job)
        return True

    def _queue_for_encoding(self, job: Job) -> None:
        """Each sentence among those waiting for the encoder that embeds it (the job's, or the
        LASER3 encoder `Encoder.prepare` routed it to)."""
        job.rows = np.empty((len(job.ids), job.encoder.dim), dtype=np.float32)
        job.left = len(job.ids)
        if not job.ids:
            job.settle(Embedded(job.rows, 0))
            return
        with self._backlog_changed:
            for row, encoder in enumerate(job.ids.encoders):
                backlog = self._backlogs.get(id(encoder))
                if backlog is None:
                    backlog = self._backlogs[id(encoder)] = Backlog(encoder)
                backlog.add(next(self._arrivals), job, row)
            self._backlog_changed.notify_all()

    def _purge(self, job: Job) -> None:
        """Drop the waiting sentences of an abandoned request."""
        removed = 0
        with self._backlog_changed:
            for key, backlog in list(self._backlogs.items()):
                removed += backlog.remove(job) if job.ids else 0
                if backlog.idle:
                    del self._backlogs[key]
        if removed:
            self.metrics.abandoned(removed)

    def _encode_loop(self) -> None:
        while self._embed_next():  # as in _prepare_loop, nothing is held between batches
            pass

    def _embed_next(self) -> bool:
        """Embed the next batch and hand its rows back; False at the end."""
        taken = self._next_batch()
        if taken is None:
            return False
        backlog, batch = taken
        rows = None
        try:
            if batch:
                rows = backlog.encoder.encode_batch([job.ids[row] for _, job, row in batch])
        except Exception as error:
            for _, job, _ in batch:
                job.settle(error=error)
        self._hand_back(backlog, batch, rows)
        return True

    def _next_batch(self) -> Optional[tuple[Backlog, list[Waiting]]]:
        """The next batch, from the backlog whose oldest sentence waited longest among those
        with a free place; None once everything is prepared and embedded."""
        with self._backlog_changed:
            while True:
                ready = [backlog for backlog in self._backlogs.values() if backlog.ready]
                if ready:
                    break
                if self._prepared_all and not any(b.count for b in self._backlogs.values()):
                    return None
                self._backlog_changed.wait()
            backlog = min(ready, key=Backlog.oldest)
            backlog.running += 1
            batch, dropped = backlog.take_batch()
        if dropped:
            self.metrics.abandoned(dropped)
        return backlog, batch

    def _hand_back(self, backlog: Backlog, batch: list[Waiting],
                   rows: Optional[np.ndarray]) -> None:
        """Rows to their jobs; a job whose last row this is is answered."""
        finished = []
        with self._backlog_changed:
            backlog.running -= 1
            if backlog.idle:  # nothing keeps its model loaded
                del self._backlogs[id(backlog.encoder)]
            self._backlog_changed.notify_all()
            for index, (_, job, row) in enumerate(batch):
                if rows is not None:
                    job.rows[row] = rows[index]
                job.left -= 1
                if job.left == 0 and not job.result.done():
                    finished.append(job)
        if rows is not None:
            self.metrics.batch(len({id(job) for _, job, _ in batch}), len(batch))
        for job in finished:
            job.settle(Embedded(job.rows, job.tokens))
