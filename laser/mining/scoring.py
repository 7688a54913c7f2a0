"""Scoring a line-aligned bitext: cosine, margin or CSLS for every line, and their histogram."""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..search.approximate import ApproximateSearch
from ..search.vectors import Vectors, check_same_dim
from .margins import Neighbourhoods, margin
from .mine import aligned_similarities
from ..io.atomic import atomic_text_output
from ..io.text import read_lines

METHODS = ("cosine", "margin", "csls")


def score_bitext(x: Vectors, y: Vectors, method: str = "margin", k: int = 4, kind: str = "ratio",
                 approximate: Optional[ApproximateSearch] = None,
                 progress: bool = False) -> np.ndarray:
    """One float32 score per line pair (x row i, y row i).

    margin: the official `score` mode, neighbourhoods taken over each whole side;
    csls: 2 cos - r_src - r_trg (Conneau et al., 2018), the mean k-NN similarities on each side.
    """
    if method not in METHODS:
        raise LaserError(f"unknown scoring method {method!r}; choose one of {', '.join(METHODS)}")
    if len(x) != len(y):
        raise LaserError(f"{x.name} holds {len(x)} rows but {y.name} holds {len(y)}: a bitext "
                         "must be line-aligned")
    check_same_dim(x, y)
    every = np.arange(len(x))
    sims = aligned_similarities(x, y, every, every)
    if method == "cosine":
        return sims
    found = Neighbourhoods.compute(x, y, k, approximate, progress)
    fwd_mean, bwd_mean = found.fwd.mean(), found.bwd.mean()
    if method == "margin":
        return margin(sims, fwd_mean, bwd_mean, kind)
    return 2 * sims - fwd_mean - bwd_mean


def write_scores(output: str, scores: np.ndarray, src_text: Optional[str] = None,
                 trg_text: Optional[str] = None) -> None:
    """One score a line, with the sentence pair after it when both texts are given."""
    with atomic_text_output(output) as out:
        shown = (str(value) for value in scores)
        if src_text and trg_text:
            for score, src, trg in zip(shown, read_lines(src_text), read_lines(trg_text)):
                out.write(f"{score}\t{src}\t{trg}\n")
        else:
            out.writelines(f"{score}\n" for score in shown)


@dataclass
class Histogram:
    """Counts of the finite scores in equal-width bins over their range."""

    edges: np.ndarray
    counts: np.ndarray
    missing: int
    quantiles: dict

    @classmethod
    def of(cls, scores: np.ndarray, bins: int = 20) -> "Histogram":
        finite = scores[np.isfinite(scores)].astype(np.float64)
        if finite.size == 0:
            raise LaserError("no finite score to draw a histogram of")
        low, high = float(finite.min()), float(finite.max())
        high = high if high > low else low + 1
        counts, edges = np.histogram(finite, bins=bins, range=(low, high))
        points = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
        quantiles = dict(zip(points, np.quantile(finite, points).tolist()))
        return cls(edges, counts, int(scores.size - finite.size), quantiles)

    def text(self, width: int = 40) -> str:
        """Bins with their counts, share, share of scores at or above the bin, and a bar."""
        total = int(self.counts.sum())
        lines = [f"# {total} scores from {self.edges[0]:.4f} to {self.edges[-1]:.4f}"
                 + (f"; {self.missing} not a number" if self.missing else ""),
                 "# quantiles: " + "  ".join(f"{int(p * 100)}%: {v:.4f}"
                                              for p, v in self.quantiles.items()),
                 "# from      to          count   share  at/above"]
        above = total - np.concatenate([[0], np.cumsum(self.counts)[:-1]])
        peak = max(int(self.counts.max()), 1)
        for low, high, count, rest in zip(self.edges[:-1], self.edges[1:], self.counts, above):
            bar = "#" * round(width * count / peak)
            lines.append(f"{low:9.4f} {high:9.4f} {count:9d} {100 * count / total:6.2f}% "
                         f"{100 * rest / total:6.2f}%  {bar}")
        return "\n".join(lines) + "\n"

    def png(self, width: int = 640, height: int = 360) -> bytes:
        """A grey-scale bar chart: range of the scores under the x axis, top count on the y axis."""
        left, right, top, bottom = 70, 20, 20, 40
        image = np.full((height, width), 255, dtype=np.uint8)
        plot_w, plot_h = width - left - right, height - top - bottom
        peak = max(int(self.counts.max()), 1)
        bins = len(self.counts)
        for i, count in enumerate(self.counts):
            x0 = left + i * plot_w // bins
            x1 = left + (i + 1) * plot_w // bins - 1
            bar = round(plot_h * count / peak)
            image[top + plot_h - bar:top + plot_h, x0:x1] = 110
        image[top:top + plot_h + 1, left - 1] = 0
        image[top + plot_h, left - 1:left + plot_w] = 0
        _draw_text(image, f"{peak}", 4, top)
        _draw_text(image, "0", left - 14, top + plot_h - 10)
        _draw_text(image, f"{self.edges[0]:.4g}", left, top + plot_h + 8)
        label = f"{self.edges[-1]:.4g}"
        _draw_text(image, label, left + plot_w - _text_width(label), top + plot_h + 8)
        return _png_bytes(image)


_GLYPHS = {
    "0": ("111", "101", "101", "101", "111"), "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"), "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"), "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"), "7": ("111", "001", "001", "001", "001"),
    "8": ("111", "101", "111", "101", "111"), "9": ("111", "101", "111", "001", "111"),
    ".": ("000", "000", "000", "000", "010"), "-": ("000", "000", "111", "000", "000"),
    "+": ("000", "010", "111", "010", "000"), "e": ("000", "111", "111", "100", "111"),
}
_SCALE = 2


def _text_width(text: str) -> int:
    return len(text) * 4 * _SCALE


def _draw_text(image: np.ndarray, text: str, x: int, y: int) -> None:
    """Draw digits (and . - + e) with a 3x5 pixel font, scaled, top-left at (x, y)."""
    for position, char in enumerate(text):
        glyph = np.array([[bit == "1" for bit in row] for row in _GLYPHS[char]])
        pixels = np.kron(glyph, np.ones((_SCALE, _SCALE), dtype=bool))
        x0 = x + position * 4 * _SCALE
        area = image[y:y + pixels.shape[0], x0:x0 + pixels.shape[1]]
        area[pixels[:area.shape[0], :area.shape[1]]] = 0


def _png_bytes(gray: np.ndarray) -> bytes:
    """An 8-bit grey-scale PNG of a 2-d uint8 array."""
    height, width = gray.shape
    raw = b"".join(b"\x00" + row.tobytes() for row in gray)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))
