"""Nearest neighbours of embeddings: exact k-NN in both directions from one blocked product, and
FAISS indexes (built in chunks from a memory map, saved with a metadata sidecar, searched)."""
from __future__ import annotations

import functools
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import faiss
import numpy as np
from tqdm import tqdm

from ..errors import LaserError
from ..io.text import atomic_text_output, read_lines

METRICS = ("cosine", "ip", "l2")
BLOCK_ROWS = 8192
FRESH_SAMPLE = 2048
SEARCH_BATCH = 16384
RESCORE_BATCH = 2048
META_SUFFIX = ".json"
META_FORMAT = 1


@dataclass
class Vectors:
    """Rows of an embedding matrix as float32 blocks, L2-normalised unless `normalize` is off.

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
        """The rows at `positions` of this selection (sorted positions read a memory map best)."""
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
        """Mean similarity of each row's neighbourhood (float32, as the official tool has it)."""
        return self.sims.mean(axis=1)


class _TopK:
    """The running k best (similarity, id) of each row; on equal similarities the lower id wins."""

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


def _hits(sims: np.ndarray, cut: np.ndarray, along_rows: bool, inclusive: bool,
          buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of the entries above the cut of their row (or column, unless `along_rows`),
    or at it when `inclusive`. When few lines reach their cut, only those lines are scanned."""
    compare = np.greater_equal if inclusive else np.greater
    lines = np.flatnonzero(compare(sims.max(axis=1 if along_rows else 0), cut))
    if 4 * len(lines) > len(cut):
        compare(sims, cut[:, None] if along_rows else cut[None, :], out=buffer)
        return np.divmod(np.flatnonzero(buffer), sims.shape[1])
    sub = sims[lines] if along_rows else sims[:, lines].T
    own, other = np.nonzero(compare(sub, cut[lines, None]))
    own = lines[own]
    return (own, other) if along_rows else (other, own)


def _fresh_cut(sims: np.ndarray, k: int) -> np.ndarray:
    """A lower bound of each row's k-th best: its k-th best among the first few columns."""
    width = min(sims.shape[1], max(FRESH_SAMPLE, k))
    head = np.ascontiguousarray(sims[:, :width])
    return np.partition(head, width - k, axis=1)[:, width - k]


@dataclass(frozen=True)
class _Product:
    """How blocks of similarities are computed: `approx(x, y, out)` writes x @ y.T into `out`
    within `bound` of the float32 dot products; with a bound, candidates are re-scored exactly."""

    approx: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    bound: float


SINGLE = _Product(lambda x, y, out: np.matmul(x, y.T, out=out), 0.0)
PRECISIONS = ("auto", "float32", "float16")


def _half_product(dim: int) -> _Product:
    """float16 inputs, float32 accumulation (the CPU's fp16/AMX units through torch): the error
    bound covers rounding both inputs, the accumulation of `dim` terms and a float16 result."""
    import torch
    results: dict[tuple[int, int], torch.Tensor] = {}

    def approx(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
        if out.shape not in results:
            results[out.shape] = torch.empty(out.shape, dtype=torch.float16)
        result = results[out.shape]
        torch.matmul(torch.from_numpy(x).half(), torch.from_numpy(y).half().T, out=result)
        torch.from_numpy(out).copy_(result)
        return out
    return _Product(approx, 4 * 2.0 ** -11 + dim * 2.0 ** -23 + 2.0 ** -18)


def _best_time(work: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


@functools.cache
def _half_pays_off(dim: int) -> bool:
    """Checked once: float16 products are clearly faster here, and as accurate as assumed."""
    try:
        half = _half_product(dim)
    except ImportError:
        return False
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((4096, dim), dtype=np.float32) for _ in range(2))
    y[:512] = x[:512] + 0.05 * y[:512]
    faiss.normalize_L2(x)
    faiss.normalize_L2(y)
    out = np.empty((len(x), len(y)), dtype=np.float32)
    accurate = np.abs(half.approx(x, y, out) - x @ y.T).max() <= half.bound / 2
    return bool(accurate and 1.5 * _best_time(lambda: half.approx(x, y, out))
                < _best_time(lambda: SINGLE.approx(x, y, out)))


def _product(precision: str, dim: int, pairs: int) -> _Product:
    if precision not in PRECISIONS:
        raise LaserError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision == "float16" or (precision == "auto" and pairs >= BLOCK_ROWS ** 2
                                  and _half_pays_off(dim)):
        return _half_product(dim)
    return SINGLE


def _pair_dots(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Float32 dot products of x[rows[i]] and y[cols[i]], in chunks."""
    out = np.empty(len(rows), dtype=np.float32)
    step = max(1, (1 << 22) // x.shape[1])
    for start in range(0, len(rows), step):
        part = slice(start, start + step)
        out[part] = (x[rows[part]] * y[cols[part]]).sum(axis=1)
    return out


def _fold(sims: np.ndarray, xb: np.ndarray, yb: np.ndarray, bound: float, state: _TopK,
          along_rows: bool, offset: int, id_offset: int, fresh: bool, buffer: np.ndarray) -> None:
    """Merge a block of similarities into one direction's top-k: rows (fwd) or columns (bwd)."""
    size = sims.shape[0] if along_rows else sims.shape[1]
    if fresh:
        cut = _fresh_cut(sims if along_rows else sims.T, state.k)
    else:
        cut = state.sims[offset:offset + size, -1] - bound
    r, c = _hits(sims, cut, along_rows, fresh, buffer[:sims.size].reshape(sims.shape))
    values = _pair_dots(xb, yb, r, c) if bound else sims[r, c]
    own, other = (r, c) if along_rows else (c, r)
    state.merge(own + offset, other + id_offset, values)


def _merge_block(xb: np.ndarray, yb: np.ndarray, product: _Product, fwd: _TopK, bwd: _TopK,
                 r0: int, c0: int, buffers: tuple[np.ndarray, np.ndarray, np.ndarray],
                 pool: ThreadPoolExecutor) -> None:
    """Fold the block of x rows r0.. against y rows c0.. into both top-k, one thread each. The
    first block of a row or column is exact: it sets the cuts later blocks are screened by."""
    if r0 == 0 or c0 == 0:
        product = SINGLE
    sims = product.approx(xb, yb, buffers[2][:len(xb) * len(yb)].reshape(len(xb), len(yb)))
    bound = product.bound
    jobs = [pool.submit(_fold, sims, xb, yb, bound, fwd, True, r0, c0, c0 == 0, buffers[0]),
            pool.submit(_fold, sims, xb, yb, bound, bwd, False, c0, r0, r0 == 0, buffers[1])]
    for job in jobs:
        job.result()


def exact_knn(x: Vectors, y: Vectors, k: int, block: int = BLOCK_ROWS, progress: bool = False,
              precision: str = "auto") -> tuple[Neighbours, Neighbours]:
    """Exact k-NN of x in y and of y in x from one shared blocked product; k is capped per side.

    Memory is a few blocks plus the results: neither matrix has to fit in RAM. `precision`
    float16 screens blocks with fast half-precision products and re-scores every candidate that
    could make the top k in float32, so results are those of float32; auto uses it for big
    inputs when this machine computes float16 products fast.
    """
    if len(x) == 0 or len(y) == 0:
        raise LaserError("cannot search an empty set of embeddings")
    if x.dim != y.dim:
        raise LaserError(f"{x.name} has dimension {x.dim} but {y.name} has {y.dim}")
    if k < 1:
        raise LaserError("the number of neighbours k must be at least 1")
    product = _product(precision, x.dim, len(x) * len(y))
    fwd, bwd = _TopK(len(x), min(k, len(y))), _TopK(len(y), min(k, len(x)))
    block = max(block, k)
    buffers = (np.empty(block * block, dtype=bool), np.empty(block * block, dtype=bool),
               np.empty(block * block, dtype=np.float32))
    total = -(-len(x) // block) * -(-len(y) // block)
    with tqdm(total=total, unit="block", disable=None if progress else True, leave=False,
              desc="k-NN") as bar, ThreadPoolExecutor(2) as pool:
        for r0, xb in x.blocks(block):
            for c0, yb in y.blocks(block):
                _merge_block(xb, yb, product, fwd, bwd, r0, c0, buffers, pool)
                bar.update()
    return fwd.result(), bwd.result()


@dataclass(frozen=True)
class ApproximateSearch:
    """k-NN through a FAISS index of each side: the `factory` string, IVF lists visited per query,
    and how many times k candidates each index returns to be re-scored with exact cosines."""

    factory: str
    nprobe: Optional[int] = None
    refine: int = 4


def approximate_knn(x: Vectors, y: Vectors, k: int, approximate: ApproximateSearch,
                    progress: bool = False) -> tuple[Neighbours, Neighbours]:
    """k-NN of x in y and of y in x through a FAISS index of each side (for huge corpora)."""
    if x.dim != y.dim:
        raise LaserError(f"{x.name} has dimension {x.dim} but {y.name} has {y.dim}")
    found = []
    for queries, base in ((x, y), (y, x)):
        index = build_index(base, approximate.factory, "cosine", progress=progress)
        wanted = min(k, len(base))
        candidates = search(index, queries, wanted * approximate.refine, nprobe=approximate.nprobe,
                            progress=progress)
        del index
        neighbours = rescored(candidates, queries, base, wanted)
        if (neighbours.ids < 0).any():
            raise LaserError(f"the {approximate.factory} index of {base.name} found fewer than k "
                             "neighbours for some sentences; raise --nprobe or use fewer lists")
        found.append(neighbours)
    return found[0], found[1]


def rescored(candidates: Neighbours, queries: Vectors, base: Vectors, k: int,
             batch: int = RESCORE_BATCH) -> Neighbours:
    """The best k of each query's candidates by exact cosine (lower id first on ties): an index
    with compressed codes then only decides which candidates are seen, never their scores."""
    sims = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    for start, block in queries.blocks(batch):
        rows = slice(start, start + len(block))
        part_sims, part_ids = _exact_scores(block, candidates.ids[rows], base)
        sims[rows], ids[rows] = part_sims[:, :k], part_ids[:, :k]
    return Neighbours(sims, ids)


def _exact_scores(queries: np.ndarray, ids: np.ndarray, base: Vectors) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """Exact similarities of each query row to its candidate ids (-1: none), sorted best first."""
    valid = ids >= 0
    wanted, slot = np.unique(ids[valid], return_inverse=True)
    vectors = base.take(wanted)
    rows = np.nonzero(valid)[0]
    sims = np.full(ids.shape, -np.inf, dtype=np.float32)
    sims[valid] = _pair_dots(queries, vectors, rows, slot)
    order = np.lexsort((ids, -sims), axis=1)
    ids, sims = np.take_along_axis(ids, order, 1), np.take_along_axis(sims, order, 1)
    return sims, np.where(np.isfinite(sims), ids, -1)


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
    """An empty index from a FAISS factory string (Flat, IVF4096,Flat, OPQ32,IVF16384,PQ32...)."""
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


def replace_atomically(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Create `path` by `write(temp_name)` on a temp file beside it, renamed only on success."""
    path = Path(path)
    if not path.parent.is_dir():
        raise LaserError(f"{path}: output directory does not exist")
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
    replace_atomically(path, lambda tmp: faiss.write_index(index, tmp))

    def write_meta(tmp: str) -> None:
        Path(tmp).write_text(json.dumps(asdict(meta), indent=2) + "\n", encoding="utf-8")
    replace_atomically(meta_path(path), write_meta)


def load_index(path: str | os.PathLike) -> tuple[faiss.Index, IndexMeta]:
    """Read an index saved by `save_index`; refuses one whose sidecar does not match it."""
    path, sidecar = Path(path), meta_path(path)
    if not path.is_file():
        raise LaserError(f"{path}: no such index file")
    if not sidecar.is_file():
        raise LaserError(f"{path}: metadata {sidecar.name} is missing; build indexes with "
                         "laser knn build")
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
        raise LaserError(f"{index_path}: the index holds {meta.dim}-d vectors but the queries "
                         f"are {dim}-d")
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
    """Top-k of every query row, in batches; `exclude_self` drops each query's own id."""
    set_search_parameters(index, nprobe, ef_search)
    wanted = min(k + exclude_self, index.ntotal)
    sims = np.empty((len(queries), wanted), dtype=np.float32)
    ids = np.empty((len(queries), wanted), dtype=np.int64)
    with tqdm(total=len(queries), unit="query", disable=None if progress else True, leave=False,
              desc="searching") as bar:
        for start, block in queries.blocks(batch):
            rows = slice(start, start + len(block))
            sims[rows], ids[rows] = index.search(block, wanted)
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
    return Neighbours(found.sims[keep].reshape(rows, width - 1),
                      found.ids[keep].reshape(rows, width - 1))


@contextmanager
def embedded_text(encoder, text_path: str, lang: str,
                  workdir: Optional[str] = None) -> Iterator[np.ndarray]:
    """Embed each line of a text file into a temporary .npy, memory-mapped (removed afterwards)."""
    from ..io.embeddings import open_embeddings
    from ..pipeline import embed_file
    with tempfile.TemporaryDirectory(prefix=".laser-embed-", dir=workdir) as tmp:
        path = os.path.join(tmp, "embeddings.npy")
        embed_file(encoder, text_path, path, lang, progress=True, provenance=False)
        yield open_embeddings(path)


def line_texts(path: str, lines: np.ndarray) -> dict[int, str]:
    """The text of the given (0-based) lines of a file, read in one streamed pass."""
    wanted = np.zeros(int(lines.max()) + 1 if len(lines) else 0, dtype=bool)
    wanted[lines] = True
    texts = {}
    for number, text in enumerate(read_lines(path)):
        if number >= len(wanted):
            break
        if wanted[number]:
            texts[number] = text
    return texts


def count_lines(path: str) -> int:
    """Lines of a text file as `read_lines` splits them."""
    return sum(1 for _ in read_lines(path))


def write_neighbours(output: str, found: Neighbours, query_text: Optional[str] = None,
                     target_text: Optional[str] = None) -> None:
    """TSV `query_id rank target_id score [query_text target_text]`, ids 0-based, rank from 1."""
    targets = line_texts(target_text, found.ids[found.ids >= 0]) if target_text else {}
    queries = read_lines(query_text) if query_text else None
    ranks = np.arange(1, found.ids.shape[1] + 1).tolist()
    with atomic_text_output(output) as out:
        for query, (sims, ids) in enumerate(zip(found.sims.tolist(), found.ids.tolist())):
            suffix = ""
            if queries is not None:
                text = next(queries)
            for rank, sim, target in zip(ranks, sims, ids):
                if target < 0:
                    break
                if queries is not None:
                    suffix = f"\t{text}\t{targets[target]}"
                out.write(f"{query}\t{rank}\t{target}\t{sim:.6f}{suffix}\n")


def embeddings_model(path: str) -> Optional[str]:
    """The model sha256 in the provenance sidecar `laser embed` writes beside embeddings, if any."""
    sidecar = Path(f"{path}.json")
    if not sidecar.is_file():
        return None
    try:
        return json.loads(sidecar.read_text(encoding="utf-8")).get("model_sha256")
    except (ValueError, AttributeError):
        return None
