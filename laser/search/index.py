"""FAISS indexes: built in chunks from a memory map, saved with a metadata sidecar, searched."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import replace_atomically
from ..io.sidecar import write_sidecar
from ..io.stderr import stderr_redirected
from ..models.spaces import Origin, check_same_space
from ..progress import progress_bar
from .vectors import Neighbours, Vectors

if TYPE_CHECKING:
    import faiss

METRICS = ("cosine", "ip", "l2")


SEARCH_BATCH = 16384


META_SUFFIX = ".json"


META_FORMAT = 1
# FAISS's k-means asks for this many training points per centroid (min_points_per_centroid).
POINTS_PER_CENTROID = 39


@dataclass
class IndexMeta:
    """What an index file holds, saved beside it as INDEX.json and checked before every search."""

    dim: int
    metric: str
    count: int
    factory: str
    model: Optional[str] = None
    source: Optional[str] = None
    format: int = META_FORMAT
    text: Optional[str] = None  # the sentences of the rows, when built from a text file
    model_name: Optional[str] = None  # the model (`model` is its sha256) and its embedding space
    model_space: Optional[str] = None

    def origin(self, index_path: str | os.PathLike) -> Origin:
        """The model and space of the indexed vectors, for `check_same_space`."""
        return Origin(str(index_path), self.model_name, self.model_space, self.model)


def _faiss_metric(metric: str) -> int:
    import faiss
    if metric not in METRICS:
        raise LaserError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    return faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT


def new_index(dim: int, factory: str, metric: str = "cosine") -> faiss.Index:
    """An empty index from a FAISS factory string (Flat, IVF4096,Flat, OPQ32,IVF16384,PQ32...)."""
    import faiss
    try:
        return faiss.index_factory(dim, factory, _faiss_metric(metric))
    except RuntimeError as error:
        detail = str(error).strip().splitlines()[-1].split(": ")[-1]
        raise LaserError(f"invalid FAISS index {factory!r} for dimension {dim}: {detail}") from None


def default_train_size(index: faiss.Index, rows: int) -> int:
    """Training sample: 64 points per IVF list (at least 50,000), never more than all rows."""
    import faiss
    try:
        lists = faiss.extract_index_ivf(index).nlist
    except RuntimeError:
        lists = 0
    return min(rows, max(50_000, 64 * lists))


def build_index(vectors: Vectors, factory: str, metric: str = "cosine",
                train_size: Optional[int] = None, chunk: int = SEARCH_BATCH,
                progress: bool = False, seed: int = 0) -> faiss.Index:
    """Train on a random sample when the index needs it, then add every row in chunks."""
    index = trained_index(vectors, factory, metric, train_size, seed, progress)
    add_rows(index, vectors, chunk, progress)
    return index


def trained_index(vectors: Vectors, factory: str, metric: str = "cosine",
                  train_size: Optional[int] = None, seed: int = 0,
                  progress: bool = False) -> faiss.Index:
    """An empty index, trained (when it needs it) on a sample of rows drawn with `seed`; with
    `progress`, a sample too small for its k-means is said once, in one line on stderr."""
    if len(vectors) == 0:
        raise LaserError(f"{vectors.name}: no embeddings to index")
    index = new_index(vectors.dim, factory, metric)
    if not index.is_trained:
        size = min(len(vectors), train_size or default_train_size(index, len(vectors)))
        sample = np.sort(np.random.default_rng(seed).choice(len(vectors), size, replace=False))
        runs = _clusterings(index)
        _check_enough_points(runs, size, vectors.name, factory)
        short = [f"{centroids} {what}" for centroids, what in runs
                 if size < centroids * POINTS_PER_CENTROID]  # under FAISS's advice
        try:
            with _without_clustering_warnings():
                index.train(vectors.take(sample))
        except RuntimeError as error:
            raise LaserError(f"cannot train {factory!r} on {size} vectors of {vectors.name}: "
                             f"{str(error).strip().splitlines()[-1]}") from None
        if short and progress:
            from tqdm import tqdm  # its write() keeps a bar below the message intact
            tqdm.write(f"laser: {vectors.name}: {factory} trained on {size} points for "
                       f"{short[0]}; under {POINTS_PER_CENTROID} points per centroid may lower "
                       "recall (more rows or fewer centroids help)", file=sys.stderr)
    return index


def _clusterings(index: faiss.Index) -> list[tuple[int, str]]:
    """The k-means runs of training `index` (IVF lists, PQ codebooks) as (centroids, what)."""
    import faiss
    try:
        ivf = faiss.extract_index_ivf(index)
    except RuntimeError:
        ivf = None
    runs = [] if ivf is None else [(ivf.nlist, "lists")]
    pq = getattr(faiss.downcast_index(index if ivf is None else ivf), "pq", None)
    if pq is not None:
        runs.append((pq.ksub, "PQ centroids"))
    return runs


def _check_enough_points(runs: list[tuple[int, str]], size: int, name: str,
                         factory: str) -> None:
    """Refuse, in one line, a k-means run with more centroids than training points."""
    for centroids, what in runs:
        if size < centroids:
            raise LaserError(f"cannot train {factory!r} on {size} vectors of {name}: its "
                             f"{centroids} {what} need at least as many vectors; use fewer "
                             "(e.g. IVF16,Flat for thousands of rows) or drop --index for the "
                             "exact search")


@contextmanager
def _without_clustering_warnings() -> Iterator[None]:
    """FAISS's k-means prints `WARNING clustering ...` lines from C++ straight to file descriptor
    2 (one per PQ sub-quantizer, per OPQ iteration): while training, stderr goes to a temp file,
    and whatever else was printed there is passed on afterwards."""
    with tempfile.TemporaryFile() as captured:
        try:
            with stderr_redirected(captured):
                yield
        finally:
            captured.seek(0)
            others = [line for line in captured.read().decode("utf-8", "replace").splitlines(True)
                      if not line.startswith("WARNING clustering")]
            sys.stderr.write("".join(others))


def add_rows(index: faiss.Index, vectors: Vectors, chunk: int = SEARCH_BATCH,
             progress: bool = False, first_id: Optional[int] = None) -> None:
    """Add every row in chunks: numbered on from the index's count, or from `first_id` (a shard
    of a bigger set, for indexes that take ids)."""
    with progress_bar(progress, total=len(vectors), unit="vec", desc="indexing") as bar:
        for start, block in vectors.blocks(chunk):
            if first_id is None:
                index.add(block)
            else:
                index.add_with_ids(block, np.arange(first_id + start,
                                                    first_id + start + len(block)))
            bar.update(len(block))


def meta_path(index_path: str | os.PathLike) -> Path:
    return Path(f"{index_path}{META_SUFFIX}")


def save_index(index: faiss.Index, meta: IndexMeta, path: str | os.PathLike) -> None:
    """Write the index and its metadata sidecar, each through a temp file renamed on success
    (to stdout, a device or a FIFO: the index alone)."""
    import faiss
    replace_atomically(path, lambda tmp: faiss.write_index(index, tmp))
    write_sidecar(path, asdict(meta))


def _embeddings_not_index(path: Path) -> LaserError:
    return LaserError(f"{path}: embeddings, not an index ({meta_path(path).name} is their "
                      f"sidecar); index them first: laser knn build {path} -o "
                      f"{path.with_suffix('.index')}, then search that index")


def load_index(path: str | os.PathLike) -> tuple[faiss.Index, IndexMeta]:
    """Read an index saved by `save_index`; refuses one whose sidecar does not match it."""
    import faiss
    path, sidecar = Path(path), meta_path(path)
    if not path.is_file():
        raise LaserError(f"{path}: no such index file")
    if not sidecar.is_file():
        raise LaserError(f"{path}: metadata {sidecar.name} is missing; build indexes with "
                         "laser knn build")
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        if isinstance(record, dict) and "rows" in record and "metric" not in record:
            raise _embeddings_not_index(path)  # the sidecar `laser embed` writes
        meta = IndexMeta(**record)
    except (ValueError, TypeError) as error:
        raise LaserError(f"{sidecar}: not valid index metadata ({error})") from None
    if meta.format != META_FORMAT:
        raise LaserError(f"{sidecar}: metadata format {meta.format} is not supported")
    try:
        index = faiss.read_index(str(path))
    except RuntimeError:
        raise LaserError(f"{path}: not a readable FAISS index") from None
    if index.d != meta.dim or index.ntotal != meta.count:
        raise LaserError(f"{path}: holds {index.ntotal} x {index.d} vectors but {sidecar.name} "
                         f"says {meta.count} x {meta.dim}")
    return index, meta


def check_queries(index_path: str, meta: IndexMeta, dim: int, queries: Origin | str) -> None:
    """Refuse queries the index cannot answer meaningfully: another embedding space
    (`check_same_space`; `queries` may also be the querying model's checkpoint sha256) or
    another dimension."""
    if isinstance(queries, str):
        queries = Origin("the queries", sha256=queries)
    check_same_space(meta.origin(index_path), queries)
    check_query_dim(index_path, meta, dim)


def check_query_dim(index_path: str, meta: IndexMeta, dim: int) -> None:
    """Refuse queries of another dimension than the indexed vectors."""
    if dim != meta.dim:
        raise LaserError(f"{index_path}: the index holds {meta.dim}-d vectors but the queries "
                         f"are {dim}-d")


def set_search_parameters(index: faiss.Index, nprobe: Optional[int] = None,
                          ef_search: Optional[int] = None) -> None:
    """nprobe for IVF indexes, efSearch for HNSW; an error when the index has no such knob."""
    import faiss
    space = faiss.ParameterSpace()
    for name, value in (("nprobe", nprobe), ("efSearch", ef_search)):
        if value is None:
            continue
        try:
            space.set_index_parameter(index, name, value)
        except RuntimeError:
            raise LaserError(f"this index has no {name} parameter") from None


def search(index: faiss.Index, queries: Vectors, k: int, nprobe: Optional[int] = None,
           ef_search: Optional[int] = None, exclude_self: bool = False,
           batch: int = SEARCH_BATCH, progress: bool = False) -> Neighbours:
    """Top-k of every query row, in batches; `exclude_self` drops each query's own id."""
    set_search_parameters(index, nprobe, ef_search)
    wanted = min(k + exclude_self, index.ntotal)
    sims = np.empty((len(queries), wanted), dtype=np.float32)
    ids = np.empty((len(queries), wanted), dtype=np.int64)
    with progress_bar(progress, total=len(queries), unit="query", desc="searching") as bar:
        for start, block in queries.blocks(batch):
            rows = slice(start, start + len(block))
            sims[rows], ids[rows] = index.search(block, wanted)
            bar.update(len(block))
    found = Neighbours(sims, ids)
    return without_self(found) if exclude_self else found


def without_self(found: Neighbours) -> Neighbours:
    """Drop each row's own id (or its last neighbour when the id is not among them)."""
    rows, width = found.ids.shape
    if width == 0:
        return found
    own = found.ids == np.arange(rows)[:, None]
    own[~own.any(axis=1), -1] = True
    own &= np.cumsum(own, axis=1) == 1
    keep = ~own
    return Neighbours(found.sims[keep].reshape(rows, width - 1),
                      found.ids[keep].reshape(rows, width - 1))
