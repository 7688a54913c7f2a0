"""Counters, gauges and histograms of the server, written in the Prometheus text format."""
from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SIZE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@dataclass
class Histogram:
    """Cumulative buckets, a sum and a count, as Prometheus histograms have them."""

    bounds: tuple
    counts: list = field(init=False)  # per bound: observations at or below it
    total: float = 0.0
    count: int = 0

    def __post_init__(self):
        self.counts = [0] * len(self.bounds)

    def observe(self, value: float) -> None:
        for position, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[position] += 1
        self.total += value
        self.count += 1

    def lines(self, name: str, labels: str = "") -> list[str]:
        prefix = f"{labels}," if labels else ""
        rows = [f'{name}_bucket{{{prefix}le="{bound:g}"}} {n}'
                for bound, n in zip(self.bounds, self.counts)]
        rows.append(f'{name}_bucket{{{prefix}le="+Inf"}} {self.count}')
        suffix = f"{{{labels}}}" if labels else ""
        return rows + [f"{name}_sum{suffix} {self.total:g}", f"{name}_count{suffix} {self.count}"]


class Metrics:
    """Everything /metrics reports; updated from the event loop and the batcher's threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self.requests: Counter = Counter()  # (endpoint, status) -> count
        self.latency: dict[str, Histogram] = {}
        self.sentences = 0
        self.abandoned_sentences = 0
        self.in_flight = 0
        self.queued = 0
        self.peak_queued = 0
        self.batch_sentences = Histogram(SIZE_BUCKETS)
        self.batch_requests = Histogram(SIZE_BUCKETS)

    def started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def answered(self, endpoint: str, status: int, seconds: float, sentences: int = 0) -> None:
        with self._lock:
            self.in_flight -= 1
            self.requests[endpoint, status] += 1
            self.latency.setdefault(endpoint, Histogram(LATENCY_BUCKETS)).observe(seconds)
            self.sentences += sentences

    def queue_depth(self, sentences: int) -> None:
        with self._lock:
            self.queued = sentences
            self.peak_queued = max(self.peak_queued, sentences)

    def abandoned(self, sentences: int) -> None:
        """Sentences of abandoned requests dropped from the queue unembedded."""
        with self._lock:
            self.abandoned_sentences += sentences

    def batch(self, requests: int, sentences: int) -> None:
        """One batch of the encoder: how many requests its sentences came from, and how many
        sentences it held."""
        with self._lock:
            self.batch_requests.observe(requests)
            self.batch_sentences.observe(sentences)

    def text(self) -> str:
        """The Prometheus exposition of every metric."""
        with self._lock:
            lines = _family("laser_requests_total", "counter",
                            "Requests answered, by endpoint and HTTP status.")
            lines += [f'laser_requests_total{{endpoint="{endpoint}",status="{status}"}} {n}'
                      for (endpoint, status), n in sorted(self.requests.items())]
            lines += _family("laser_sentences_total", "counter", "Sentences embedded.")
            lines.append(f"laser_sentences_total {self.sentences}")
            lines += _family("laser_abandoned_sentences_total", "counter",
                             "Sentences of abandoned requests dropped from the queue unembedded.")
            lines.append(f"laser_abandoned_sentences_total {self.abandoned_sentences}")
            for name, value, text in (
                    ("laser_requests_in_flight", self.in_flight, "Requests being answered."),
                    ("laser_queue_sentences", self.queued,
                     "Sentences accepted and not yet embedded."),
                    ("laser_queue_peak_sentences", self.peak_queued,
                     "The most sentences ever queued at once.")):
                lines += _family(name, "gauge", text) + [f"{name} {value}"]
            lines += _family("laser_batch_requests", "histogram",
                             "Requests whose sentences one batch of the encoder held.")
            lines += self.batch_requests.lines("laser_batch_requests")
            lines += _family("laser_batch_sentences", "histogram",
                             "Sentences embedded in one batch of the encoder.")
            lines += self.batch_sentences.lines("laser_batch_sentences")
            lines += _family("laser_request_seconds", "histogram",
                             "Time to answer a request, by endpoint.")
            for endpoint, histogram in sorted(self.latency.items()):
                lines += histogram.lines("laser_request_seconds", f'endpoint="{endpoint}"')
        return "\n".join(lines) + "\n"


def _family(name: str, kind: str, text: str) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
