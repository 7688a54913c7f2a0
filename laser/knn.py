"""Nearest neighbours of embeddings: exact k-NN in both directions from one blocked product, and FAISS
indexes (built in chunks from a memory map, saved with a metadata sidecar, searched in batches)."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import faiss
import numpy as np
from tqdm import tqdm

from .errors import LaserError

METRICS = ("cosine", "ip", "l2")
BLOCK_ROWS = 8192
SEARCH_BATCH = 16384
META_SUFFIX = ".json"
META_FORMAT = 1


@dataclass
class Vectors:
    """Rows of an embedding matrix served as float32 blocks, L2-normalised unless `normalize` is off.

    `rows`, when given, selects and orders the matrix rows used (mining with --unify keeps one
    row per distinct sentence).
    """

    matrix: np.ndarray
    name: str = "embeddings"
    rows: Optional[np.ndarray] = None
    normalize: bool = True

    def __len__(self) -> int:
        return self.matrix.shape[0] if self.rows is None else len(self.rows)

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    def block(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop (positions in this selection) as a fresh C-contiguous float32 array."""
        return self.take(np.arange(start, min(stop, len(self))))

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The rows at `positions` of this selection (sorted positions read a memory map fastest)."""
        rows = positions if self.rows is None else self.rows[positions]
        if len(rows) and rows[-1] - rows[0] == len(rows) - 1 and np.all(np.diff(rows) == 1):
            source = self.matrix[rows[0]:rows[-1] + 1]
        else:
            source = self.matrix[rows]
        block = np.array(source, dtype=np.float32, order="C")
        finite = np.isfinite(block).all(axis=1)
        if not finite.all():
            bad = int(rows[int(np.argmin(finite))])
            raise LaserError(f"{self.name}: embedding row {bad + 1} holds NaN or infinity")
        if self.normalize:
            faiss.normalize_L2(block)
        return block

    def blocks(self, size: int) -> Iterator[tuple[int, np.ndarray]]:
        """(start, rows) over the whole selection, `size` rows at a time."""
        for start in range(0, len(self), size):
            yield start, self.block(start, start + size)


@dataclass
class Neighbours:
    """For each query row, its k nearest rows elsewhere: similarities best first, and their ids."""

    sims: np.ndarray
    ids: np.ndarray

    def mean(self) -> np.ndarray:
        """Mean similarity of each row's neighbourhood (float32, as the official tool computes it)."""
        return self.sims.mean(axis=1)


class _TopK:
    """The running k best (similarity, id) of each row; among equal similarities the lower id wins."""

    def __init__(self, rows: int, k: int):
        self.sims = np.full((rows, k), -np.inf, dtype=np.float32)
        self.ids = np.full((rows, k), -1, dtype=np.int64)

    @property
    def k(self) -> int:
        return self.sims.shape[1]

    def merge(self, rows: np.ndarray, ids: np.ndarray, sims: np.ndarray) -> None:
        """Fold candidate (row, id, similarity) triples into the rows' current best k."""
        if rows.size == 0:
            return
        k = self.k
        touched, counts = np.unique(rows, return_counts=True)
        all_rows = np.concatenate([np.repeat(touched, k), rows])
        all_ids = np.concatenate([self.ids[touched].ravel(), ids])
        all_sims = np.concatenate([self.sims[touched].ravel(), sims])
        order = np.lexsort((all_ids, -all_sims, all_rows))
        run = counts + k
        first = np.cumsum(run) - run
        chosen = order[(first[:, None] + np.arange(k)).ravel()]
        self.sims[touched] = all_sims[chosen].reshape(-1, k)
        self.ids[touched] = all_ids[chosen].reshape(-1, k)

    def result(self) -> Neighbours:
        return Neighbours(self.sims, self.ids)


def _above(block: np.ndarray, cut: np.ndarray, inclusive: bool) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of the entries above each row's cut, or at it too when `inclusive`."""
    best = block.max(axis=1)
    rows = np.flatnonzero(best >= cut if inclusive else best > cut)
    if rows.size == 0:
        return rows, rows
    sub = block[rows]
    hit = sub >= cut[rows, None] if inclusive else sub > cut[rows, None]
    r, c = np.nonzero(hit)
    return rows[r], c


@dataclass
class _Product:
    """Block similarities, possibly approximate: |approx - exact| <= bound; `exact` rescores pairs."""

    approx: Callable[[np.ndarray, np.ndarray], np.ndarray]
    bound: float

    @staticmethod
    def exact(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Float32 dot products of x[rows] with y[cols], pair by pair (chunked to bound memory)."""
        out = np.empty(len(rows), dtype=np.float32)
        step = max(1, (1 << 24) // x.shape[1])
        for start in range(0, len(rows), step):
            part = slice(start, start + step)
            out[part] = np.einsum("ij,ij->i", x[rows[part]], y[cols[part]])
        return out


def _float32_product() -> _Product:
    return _Product(lambda x, y: x @ y.T, 0.0)


def _update(state: _TopK, approx: np.ndarray, fresh: bool, offset: int, bound: float,
            rescore: Callable[[np.ndarray, np.ndarray], np.ndarray], id_offset: int) -> None:
    """Merge one block of similarities (state rows offset.., ids id_offset..) into `state`."""
    if fresh:
        width = approx.shape[1]
        kth = np.partition(approx, width - state.k, axis=1)[:, width - state.k]
        rows, cols = _above(approx, kth - 2 * bound, inclusive=True)
    else:
        cut = state.sims[offset:offset + approx.shape[0], -1] - bound
        rows, cols = _above(approx, cut, inclusive=False)
    sims = rescore(rows, cols) if bound else approx[rows, cols]
    state.merge(rows + offset, cols + id_offset, sims)


def exact_knn(x: Vectors, y: Vectors, k: int, block: int = BLOCK_ROWS,
              progress: bool = False) -> tuple[Neighbours, Neighbours]:
    """Exact k-NN of x in y and of y in x from one shared blocked product; k is capped per side.

    Memory is a few blocks plus the results: neither matrix has to fit in RAM.
    """
    if len(x) == 0 or len(y) == 0:
        raise LaserError("cannot search an empty set of embeddings")
    if x.dim != y.dim:
        raise LaserError(f"{x.name} has dimension {x.dim} but {y.name} has {y.dim}")
    product = _fastest_product(x.dim)
    fwd, bwd = _TopK(len(x), min(k, len(y))), _TopK(len(y), min(k, len(x)))
    block = max(block, k)
    total = -(-len(x) // block) * -(-len(y) // block)
    with tqdm(total=total, unit="block", disable=None if progress else True, leave=False,
              desc="k-NN") as bar:
        for r0, xb in x.blocks(block):
            for c0, yb in y.blocks(block):
                approx = product.approx(xb, yb)
                _update(fwd, approx, c0 == 0, r0, product.bound,
                        lambda r, c: product.exact(xb, yb, r, c), c0)
                _update(bwd, approx.T, r0 == 0, c0, product.bound,
                        lambda r, c: product.exact(xb, yb, c, r), r0)
                bar.update()
    return fwd.result(), bwd.result()


def _fastest_product(dim: int) -> _Product:
    return _float32_product()


def approximate_knn(x: Vectors, y: Vectors, k: int, factory: str, nprobe: Optional[int] = None,
                    progress: bool = False) -> tuple[Neighbours, Neighbours]:
    """k-NN of x in y and of y in x through a FAISS index of each side (for corpora too big for exact)."""
    if x.dim != y.dim:
        raise LaserError(f"{x.name} has dimension {x.dim} but {y.name} has {y.dim}")
    found = []
    for queries, base in ((x, y), (y, x)):
        index = build_index(base, factory, "cosine", progress=progress)
        neighbours = search(index, queries, min(k, len(base)), nprobe=nprobe, progress=progress)
        if (neighbours.ids < 0).any():
            raise LaserError(f"the {factory} index of {base.name} found fewer than k neighbours for "
                             "some sentences; raise --nprobe or use fewer lists")
        found.append(neighbours)
        del index
    return found[0], found[1]


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


def _faiss_metric(metric: str) -> int:
    if metric not in METRICS:
        raise LaserError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    return faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT


def new_index(dim: int, factory: str, metric: str = "cosine") -> faiss.Index:
    """An empty index from a FAISS factory string (Flat, IVF4096,Flat, OPQ32,IVF16384,PQ32, HNSW32...)."""
    try:
        return faiss.index_factory(dim, factory, _faiss_metric(metric))
    except RuntimeError as error:
        detail = str(error).strip().splitlines()[-1].split(": ")[-1]
        raise LaserError(f"invalid FAISS index {factory!r} for dimension {dim}: {detail}") from None


def default_train_size(index: faiss.Index, rows: int) -> int:
    """Training sample: 64 points per IVF list (at least 50,000), never more than all rows."""
    try:
        lists = faiss.extract_index_ivf(index).nlist
    except RuntimeError:
        lists = 0
    return min(rows, max(50_000, 64 * lists))


def build_index(vectors: Vectors, factory: str, metric: str = "cosine",
                train_size: Optional[int] = None, chunk: int = SEARCH_BATCH,
                progress: bool = False, seed: int = 0) -> faiss.Index:
    """Train on a random sample when the index needs it, then add every row in chunks."""
    if len(vectors) == 0:
        raise LaserError(f"{vectors.name}: no embeddings to index")
    index = new_index(vectors.dim, factory, metric)
    if not index.is_trained:
        size = min(len(vectors), train_size or default_train_size(index, len(vectors)))
        sample = np.sort(np.random.default_rng(seed).choice(len(vectors), size, replace=False))
        try:
            index.train(vectors.take(sample))
        except RuntimeError as error:
            raise LaserError(f"cannot train {factory!r} on {size} vectors of {vectors.name}: "
                             f"{str(error).strip().splitlines()[-1]}") from None
    with tqdm(total=len(vectors), unit="vec", disable=None if progress else True, leave=False,
              desc="indexing") as bar:
        for _, block in vectors.blocks(chunk):
            index.add(block)
            bar.update(len(block))
    return index


def _replace_atomically(path: Path, write: Callable[[str], None]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def meta_path(index_path: str | os.PathLike) -> Path:
    return Path(f"{index_path}{META_SUFFIX}")


def save_index(index: faiss.Index, meta: IndexMeta, path: str | os.PathLike) -> None:
    """Write the index and its metadata sidecar, each through a temp file renamed on success."""
    path = Path(path)
    if not path.parent.is_dir():
        raise LaserError(f"{path}: output directory does not exist")
    _replace_atomically(path, lambda tmp: faiss.write_index(index, tmp))

    def write_meta(tmp: str) -> None:
        Path(tmp).write_text(json.dumps(asdict(meta), indent=2) + "\n", encoding="utf-8")
    _replace_atomically(meta_path(path), write_meta)


def load_index(path: str | os.PathLike) -> tuple[faiss.Index, IndexMeta]:
    """Read an index saved by `save_index`; refuses one whose sidecar does not match it."""
    path, sidecar = Path(path), meta_path(path)
    if not path.is_file():
        raise LaserError(f"{path}: no such index file")
    if not sidecar.is_file():
        raise LaserError(f"{path}: metadata {sidecar.name} is missing; build indexes with laser knn build")
    try:
        meta = IndexMeta(**json.loads(sidecar.read_text(encoding="utf-8")))
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


def check_queries(index_path: str, meta: IndexMeta, dim: int, model: Optional[str]) -> None:
    """Refuse queries the index cannot answer meaningfully: another dimension or another model."""
    if dim != meta.dim:
        raise LaserError(f"{index_path}: the index holds {meta.dim}-d vectors but the queries are {dim}-d")
    if model and meta.model and model != meta.model:
        raise LaserError(f"{index_path}: built from embeddings of model {meta.model[:12]}, "
                         f"but the queries are embedded with model {model[:12]}")


def set_search_parameters(index: faiss.Index, nprobe: Optional[int] = None,
                          ef_search: Optional[int] = None) -> None:
    """nprobe for IVF indexes, efSearch for HNSW; an error when the index has no such knob."""
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
    """Top-k of every query row, in batches; `exclude_self` drops the query's own id (self-search)."""
    set_search_parameters(index, nprobe, ef_search)
    wanted = min(k + exclude_self, index.ntotal)
    sims = np.empty((len(queries), wanted), dtype=np.float32)
    ids = np.empty((len(queries), wanted), dtype=np.int64)
    with tqdm(total=len(queries), unit="query", disable=None if progress else True, leave=False,
              desc="searching") as bar:
        for start, block in queries.blocks(batch):
            sims[start:start + len(block)], ids[start:start + len(block)] = index.search(block, wanted)
            bar.update(len(block))
    found = Neighbours(sims, ids)
    return _without_self(found) if exclude_self else found


def _without_self(found: Neighbours) -> Neighbours:
    """Drop each row's own id (or its last neighbour when the id is not among them)."""
    rows, width = found.ids.shape
    if width == 0:
        return found
    own = found.ids == np.arange(rows)[:, None]
    own[~own.any(axis=1), -1] = True
    own &= np.cumsum(own, axis=1) == 1
    keep = ~own
    return Neighbours(found.sims[keep].reshape(rows, width - 1), found.ids[keep].reshape(rows, width - 1))


@contextmanager
def embedded_text(encoder, text_path: str, lang: str,
                  workdir: Optional[str] = None) -> Iterator[np.ndarray]:
    """Embed each line of a text file into a temporary .npy and memory-map it (removed afterwards)."""
    from .embedding_io import open_embeddings
    from .pipeline import embed_file
    with tempfile.TemporaryDirectory(prefix=".laser-embed-", dir=workdir) as tmp:
        path = os.path.join(tmp, "embeddings.npy")
        embed_file(encoder, text_path, path, lang, progress=True, provenance=False)
        yield open_embeddings(path)
