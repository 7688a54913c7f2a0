"""Exact k-NN in both directions from one blocked product: neither matrix has to fit in memory,
and float16 screening where this machine computes it faster. Every similarity kept is re-scored
in one fixed summation order (`pair_dots`), so the results do not depend on the BLAS library,
its thread count or float16: the blocked products only choose the candidates."""
from __future__ import annotations

import functools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np
from tqdm import tqdm

from ..errors import LaserError
from ..optional import require
from .vectors import Neighbours, Vectors, check_same_dim, pair_dots

BLOCK_ROWS = 8192


FRESH_SAMPLE = 2048


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
    within `bound` of the float32 dot products of `pair_dots`, which re-scores the candidates."""

    approx: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    bound: float


def _accumulation_bound(dim: int) -> float:
    """How far two float32 dot products of unit rows summed in different orders can be apart:
    each is within dim * 2**-24 of the exact one (plus slack for rows normalised to 1 +- ulps)."""
    return dim * 2.0 ** -23 + 2.0 ** -20


def _single_product(dim: int) -> _Product:
    """float32 products through BLAS, whose summation order depends on the thread count and the
    CPU: candidates within the bound are re-scored (`pair_dots`), so results never do."""
    return _Product(lambda x, y, out: np.matmul(x, y.T, out=out), _accumulation_bound(dim))


PRECISIONS = ("auto", "float32", "float16")


def _half_product(dim: int) -> _Product:
    """float16 inputs, float32 accumulation (the CPU's fp16/AMX units through torch): the error
    bound covers rounding both inputs, the accumulation of `dim` terms and a float16 result."""
    torch = require("torch", "float16 similarity products (--precision float16)")
    results: dict[tuple[int, int], torch.Tensor] = {}

    def approx(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
        if out.shape not in results:
            results[out.shape] = torch.empty(out.shape, dtype=torch.float16)
        result = results[out.shape]
        torch.matmul(torch.from_numpy(x).half(), torch.from_numpy(y).half().T, out=result)
        torch.from_numpy(out).copy_(result)
        return out
    return _Product(approx, 4 * 2.0 ** -11 + _accumulation_bound(dim) + 2.0 ** -18)


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
    import faiss
    try:
        half = _half_product(dim)
    except LaserError:  # no torch
        return False
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((4096, dim), dtype=np.float32) for _ in range(2))
    y[:512] = x[:512] + 0.05 * y[:512]
    faiss.normalize_L2(x)
    faiss.normalize_L2(y)
    out = np.empty((len(x), len(y)), dtype=np.float32)
    accurate = np.abs(half.approx(x, y, out) - x @ y.T).max() <= half.bound / 2
    single = _single_product(dim)
    return bool(accurate and 1.5 * _best_time(lambda: half.approx(x, y, out))
                < _best_time(lambda: single.approx(x, y, out)))


def resolve_precision(precision: str, dim: int, pairs: int) -> str:
    """float16 or float32: what `precision` means for a product of `pairs` similarities here."""
    if precision not in PRECISIONS:
        raise LaserError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision == "float16" or (precision == "auto" and pairs >= BLOCK_ROWS ** 2
                                  and _half_pays_off(dim)):
        return "float16"
    return "float32"


def _product(precision: str, dim: int, pairs: int) -> _Product:
    half = resolve_precision(precision, dim, pairs) == "float16"
    return _half_product(dim) if half else _single_product(dim)


def merge_neighbours(rows: int, k: int, parts: list[tuple[int, Neighbours]]) -> Neighbours:
    """The best k of each of `rows` rows over partial k-NN lists (lower id first on ties), each
    part's ids counted from its offset: the k-NN of a whole set from the k-NN of its shards."""
    best = _TopK(rows, k)
    for offset, part in parts:
        own = np.repeat(np.arange(rows), part.ids.shape[1])
        best.merge(own, part.ids.ravel() + offset, part.sims.ravel())
    return best.result()


def _fold(sims: np.ndarray, xb: np.ndarray, yb: np.ndarray, bound: float, state: _TopK,
          along_rows: bool, offset: int, id_offset: int, fresh: bool, buffer: np.ndarray) -> None:
    """Merge a block of similarities into one direction's top-k: rows (fwd) or columns (bwd)."""
    size = sims.shape[0] if along_rows else sims.shape[1]
    if fresh:  # within the bound of the true k-th best however the block was computed
        cut = _fresh_cut(sims if along_rows else sims.T, state.k) - 2 * bound
    else:
        cut = state.sims[offset:offset + size, -1] - bound
    r, c = _hits(sims, cut, along_rows, fresh, buffer[:sims.size].reshape(sims.shape))
    values = pair_dots(xb, yb, r, c)
    own, other = (r, c) if along_rows else (c, r)
    state.merge(own + offset, other + id_offset, values)


def _merge_block(xb: np.ndarray, yb: np.ndarray, product: _Product, fwd: _TopK, bwd: _TopK,
                 r0: int, c0: int, buffers: tuple[np.ndarray, np.ndarray, np.ndarray],
                 pool: ThreadPoolExecutor, first_row: int = 0) -> None:
    """Fold the block of x rows r0.. against y rows c0.. into both top-k, one thread each. The
    first block of a row or column of the whole product (x starts at its row `first_row`) is
    computed in float32: it sets the cuts later blocks are screened by."""
    if r0 + first_row == 0 or c0 == 0:
        product = _single_product(xb.shape[1])
    sims = product.approx(xb, yb, buffers[2][:len(xb) * len(yb)].reshape(len(xb), len(yb)))
    bound = product.bound
    jobs = [pool.submit(_fold, sims, xb, yb, bound, fwd, True, r0, c0, c0 == 0, buffers[0]),
            pool.submit(_fold, sims, xb, yb, bound, bwd, False, c0, r0, r0 == 0, buffers[1])]
    for job in jobs:
        job.result()


def exact_knn(x: Vectors, y: Vectors, k: int, block: int = BLOCK_ROWS, progress: bool = False,
              precision: str = "auto", first_row: int = 0) -> tuple[Neighbours, Neighbours]:
    """Exact k-NN of x in y and of y in x from one shared blocked product; k is capped per side.

    Memory is a few blocks plus the results: neither matrix has to fit in RAM. `precision`
    float16 screens blocks with fast half-precision products and re-scores every candidate that
    could make the top k in float32, so results are those of float32; auto uses it for big
    inputs when this machine computes float16 products fast. A shard of a bigger x that starts
    at its row `first_row` (a multiple of `block`) computes every block as the whole search does.
    """
    if len(x) == 0 or len(y) == 0:
        raise LaserError("cannot search an empty set of embeddings")
    check_same_dim(x, y)
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
                _merge_block(xb, yb, product, fwd, bwd, r0, c0, buffers, pool, first_row)
                bar.update()
    return fwd.result(), bwd.result()
