"""Topic-grouped batches: harder in-batch negatives, chosen by the teacher.

The English sides are clustered by their teacher targets (spherical k-means, faiss), and the
batch sampler orders each band of length-sorted pairs by cluster before cutting it into batches.
A batch then holds pairs of a few topics at similar lengths, so every sentence is ranked against
translations of sentences about the same things (the near-misses that xsim counts as errors),
while padding stays close to plain length bucketing. The cluster labels are cached beside the
teacher cache, so a resumed run draws exactly the batches an uninterrupted one would."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import LaserError
from ..io.atomic import replace_atomically
from ..io.embeddings import save_array
from .distill import TeacherTargets

KMEANS_ITERATIONS = 20
POINTS_PER_CLUSTER = 256  # rows that fit the centroids, per cluster
CHUNK_ROWS = 65536


@dataclass(frozen=True)
class TopicGrouping:
    """Each teacher-cache row's cluster, and how many batches of length-sorted pairs (a band)
    are reordered by cluster together: 1 is plain length bucketing, more is harder batches."""

    labels: np.ndarray
    band_batches: int


def occurrence_rank(values: np.ndarray) -> np.ndarray:
    """How often each element's value occurred before it (0 at its first occurrence)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    first = np.repeat(starts, np.diff(np.r_[starts, len(values)]))
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values)) - first
    return rank


def group_by_topic(order: np.ndarray, lengths: np.ndarray, topics: np.ndarray,
                   english: np.ndarray, band_size: int) -> np.ndarray:
    """`order` (pair indices sorted by length) with each run of `band_size` consecutive pairs
    re-sorted by topic, then length; ties keep their order in `order`. A repeated English side
    (the multi-way sentences: one English sentence, translations in 200 languages) goes to the
    next round of its band, so grouping does not fill a batch with copies of one sentence,
    which are not negatives of each other."""
    grouped = order.copy()
    for start in range(0, len(order), band_size):
        band = order[start:start + band_size]
        keys = (lengths[band], topics[band], occurrence_rank(english[band]))
        grouped[start:start + band_size] = band[np.lexsort(keys)]
    return grouped


def cluster_targets(targets: TeacherTargets, clusters: int, seed: int) -> np.ndarray:
    """Spherical k-means of the targets: each row's cluster (int32). The centroids are fitted
    on at most POINTS_PER_CLUSTER rows per cluster (faiss's own cap), and rows are assigned in
    chunks, so memory does not grow with the corpus."""
    import faiss
    total = len(targets.cache)
    if not 1 <= clusters <= total:
        raise LaserError(f"--topic-clusters {clusters}: needs 1 to {total} "
                         "(the distinct English training sentences)")
    sample_size = min(total, POINTS_PER_CLUSTER * clusters)
    sample = np.sort(np.random.default_rng(seed).choice(total, sample_size, replace=False))
    kmeans = faiss.Kmeans(targets.dim, clusters, niter=KMEANS_ITERATIONS, seed=seed,
                          spherical=True, verbose=False,
                          max_points_per_centroid=POINTS_PER_CLUSTER)
    kmeans.train(targets(sample).numpy())  # the training targets: centred, unit norm
    labels = np.empty(total, dtype=np.int32)
    for start in range(0, total, CHUNK_ROWS):
        stop = min(total, start + CHUNK_ROWS)
        _, nearest = kmeans.index.search(targets(np.arange(start, stop)).numpy(), 1)
        labels[start:stop] = nearest[:, 0]
    return labels


def _targets_fingerprint(targets: TeacherTargets) -> str:
    """Names the cache's content: its row count and column mean (read anyway for the targets)."""
    digest = hashlib.sha256(np.ascontiguousarray(targets.mean).tobytes())
    return f"{len(targets.cache)}:{digest.hexdigest()}"


def topic_labels_path(directory: Path, stem: str, clusters: int) -> Path:
    """Where `topic_labels` keeps the clusters of the teacher cache `stem` in `directory`."""
    return directory / f"{stem}.topics-{clusters}.npy"


def topic_labels(targets: TeacherTargets, clusters: int, seed: int, directory: Path,
                 stem: str) -> np.ndarray:
    """The clusters of the teacher cache `stem` in `directory`, computed once and cached as
    STEM.topics-K.npy; a saved clustering of other targets is refused."""
    labels_path = topic_labels_path(directory, stem, clusters)
    state_path = labels_path.with_suffix(".json")
    state = {"clusters": clusters, "seed": seed, "targets": _targets_fingerprint(targets),
             "iterations": KMEANS_ITERATIONS}
    if labels_path.exists() and state_path.exists():
        saved = json.loads(state_path.read_text())
        if saved != state:
            raise LaserError(f"{state_path}: clusters of another teacher cache or seed; "
                             "use another --work-dir")
        return np.load(labels_path)
    labels = cluster_targets(targets, clusters, seed)
    save_array(labels_path, labels)
    replace_atomically(state_path, lambda tmp: Path(tmp).write_text(json.dumps(state, indent=1)))
    return labels
