"""The dynamic program over beads, made linear in time and memory as Vecalign makes it (the
idea of FastDTW): the documents are halved (each pair of consecutive sentences averaged) until
the full program is small, solved there, and each finer level searches only a band of cells
around the path of the coarser one, one row of the band at a time in numpy."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .beads import AlignOptions
from .costs import BeadCosts
from .overlaps import Overlaps

Move = tuple[int, int]  # the sizes of a bead: source sentences, target sentences


@dataclass(frozen=True)
class Band:
    """The cells searched: columns lo[i] .. hi[i] of each row i = 0 .. n (prefix lengths)."""

    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def full(cls, n: int, m: int) -> Band:
        return cls(np.zeros(n + 1, dtype=np.int64), np.full(n + 1, m, dtype=np.int64))

    def layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The band's cells row by row: the row and column of each, and where each row's
        cells start (and, last, how many cells there are)."""
        widths = self.hi - self.lo + 1
        starts = np.concatenate([[0], np.cumsum(widths)])
        rows = np.repeat(np.arange(len(widths)), widths)
        columns = np.arange(starts[-1]) - starts[rows] + self.lo[rows]
        return rows, columns, starts

    def index(self, rows: np.ndarray, columns: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The position of each cell (rows[c], columns[c]) among the band's, or the number of
        cells (one past the last) for those outside it."""
        inside = (rows >= 0) & (columns >= 0)
        safe = np.where(inside, rows, 0)
        inside &= (columns >= self.lo[safe]) & (columns <= self.hi[safe])
        return np.where(inside, starts[safe] + columns - self.lo[safe], starts[-1])


def solve(costs: BeadCosts, band: Band) -> tuple[list[Move], list[float]]:
    """The cheapest monotone path through `band` from (0, 0) to (n, m): its moves, each a bead's
    sizes, and what each cost."""
    moves_of = costs.sizes + [(1, 0)]
    rows, columns, starts = band.layout()
    step = np.vstack([costs.cells(band.lo, band.hi),
                      np.full((1, len(rows)), costs.skip, dtype=np.float32)])
    before = np.vstack([band.index(rows - a, columns - b, starts) for a, b in moves_of])
    totals = np.full(len(rows) + 1, np.inf)  # the last: the cost of leaving the band
    choices = np.zeros(len(rows), dtype=np.int8)
    insertion = len(moves_of)
    for i in range(len(band.lo)):
        row = slice(starts[i], starts[i + 1])
        arriving = totals[before[:, row]] + step[:, row]
        choice = arriving.argmin(axis=0)
        best = arriving[choice, np.arange(len(choice))]
        if i == 0:
            best[0] = 0.0
        totals[row], choices[row] = _with_insertions(best, choice, costs.skip, insertion)
    return _backtrack(choices, totals, band, starts, moves_of + [(0, 1)])


def _with_insertions(best: np.ndarray, choice: np.ndarray, skip: float,
                     insertion: int) -> tuple[np.ndarray, np.ndarray]:
    """A row's costs once insertions (0-1) within it are allowed: best[j] = min(best[j],
    best[j - 1] + skip), as one running minimum of best[j] - j * skip."""
    offset = np.arange(len(best)) * skip
    shifted = best - offset
    running = np.minimum.accumulate(shifted)
    left = running < shifted
    return np.where(left, running + offset, best), np.where(left, insertion, choice)


def _backtrack(choices: np.ndarray, totals: np.ndarray, band: Band, starts: np.ndarray,
               moves_of: list[Move]) -> tuple[list[Move], list[float]]:
    i, j = len(band.lo) - 1, int(band.hi[-1])
    moves: list[Move] = []
    spent: list[float] = []
    while i or j:
        cell = starts[i] + j - band.lo[i]
        move = moves_of[choices[cell]]
        i, j = i - move[0], j - move[1]
        moves.append(move)
        spent.append(float(totals[cell] - totals[starts[i] + j - band.lo[i]]))
    return moves[::-1], spent[::-1]


def halved(side: Overlaps) -> Overlaps:
    """A document of half the sentences, each the average of two consecutive ones (runs of up
    to two of them)."""
    single = side.vectors[0]
    n = len(single)
    pairs = single[: n - n % 2].reshape(-1, 2, single.shape[1]).sum(axis=1)
    chars = side.chars[: n - n % 2].reshape(-1, 2).sum(axis=1)
    if n % 2:
        pairs, chars = np.vstack([pairs, single[-1:]]), np.append(chars, side.chars[-1])
    return runs_of(pairs, chars, 2)


def runs_of(vectors: np.ndarray, chars: np.ndarray, longest: int) -> Overlaps:
    """Overlaps whose runs are the sums of their sentences' vectors."""
    n = len(vectors)
    stacked = np.zeros((longest, n, vectors.shape[1]), dtype=np.float32)
    for length in range(1, longest + 1):
        for offset in range(length):
            stacked[length - 1, : n - length + 1] += vectors[offset: n - length + 1 + offset]
    return Overlaps.of(stacked, chars)


def project(moves: list[Move], n: int, m: int, width: int) -> Band:
    """The band of the full documents (n x m) around the path `moves` of the halved ones,
    widened by `width` cells each way."""
    lo = np.full(n + 1, m, dtype=np.int64)
    hi = np.zeros(n + 1, dtype=np.int64)
    i = j = 0
    for a, b in moves:
        rows = slice(min(2 * i, n), min(2 * (i + a), n) + 1)
        lo[rows] = np.minimum(lo[rows], min(2 * j, m))
        hi[rows] = np.maximum(hi[rows], min(2 * (j + b), m))
        i, j = i + a, j + b
    wide_lo, wide_hi = lo.copy(), hi.copy()
    for shift in range(1, width + 1):
        wide_lo[shift:] = np.minimum(wide_lo[shift:], lo[:-shift])
        wide_hi[:-shift] = np.maximum(wide_hi[:-shift], hi[shift:])
    return Band(np.maximum(wide_lo - width, 0), np.minimum(wide_hi + width, m))


def best_path(src: Overlaps, trg: Overlaps, options: AlignOptions,
              sizes: list[Move]) -> tuple[list[Move], list[float], BeadCosts]:
    """The cheapest path of beads of `sizes` (and insertions, deletions) between two documents,
    halving them while the full program exceeds `options.full_cells`."""
    costs = BeadCosts(src, trg, options, sizes)
    n, m = len(src), len(trg)
    band = Band.full(n, m)
    if (n + 1) * (m + 1) > options.full_cells and min(n, m) > 1:
        coarse = replace(options, max_bead=3)
        moves, _, _ = best_path(halved(src), halved(trg), coarse, coarse.bead_sizes())
        band = project(moves, n, m, options.band)
    moves, spent = solve(costs, band)
    return moves, spent, costs
