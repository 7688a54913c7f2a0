"""Reading and writing embedding matrices: `.npy` and the headerless LASER layout, streamed and atomic."""
from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO, Optional

import numpy as np

from ..errors import LaserError
from . import npy
from .atomic import atomic_path, replace_atomically
from .sidecar import SUFFIX as SIDECAR, read_sidecar
from .sources import expand

FORMATS = ("npy", "raw")


class EmbeddingWriter:
    """Appends rows to an `.npy` or raw file through a temp file that is renamed on success.

    Use as a context manager: on an exception (or a terminating signal) the temp file is
    removed and an existing output file is left untouched.
    """

    def __init__(self, path: str | os.PathLike, dim: int, fmt: str = "npy",
                 dtype: np.dtype = np.float32):
        if fmt not in FORMATS:
            raise LaserError(f"unknown output format {fmt!r}; choose npy or raw")
        self.path = Path(path)
        self.dim = dim
        self.fmt = fmt
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self.rows = 0
        self._stack = ExitStack()
        self._file: Optional[BinaryIO] = None

    def __enter__(self) -> "EmbeddingWriter":
        with ExitStack() as stack:
            tmp = stack.enter_context(atomic_path(self.path))
            self._file = stack.enter_context(open(tmp, "wb"))
            if self.fmt == "npy":
                self._file.write(npy.header(self.dtype, 0, self.dim))
            self._stack = stack.pop_all()
        return self

    def write(self, rows: np.ndarray) -> None:
        if rows.ndim != 2 or rows.shape[1] != self.dim:
            raise ValueError(f"expected rows of dimension {self.dim}, got shape {rows.shape}")
        self._file.write(np.ascontiguousarray(rows, dtype=self.dtype).data)
        self.rows += rows.shape[0]

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and self.fmt == "npy":
            self._file.seek(0)
            self._file.write(npy.header(self.dtype, self.rows, self.dim))
        self._stack.__exit__(exc_type, exc, tb)


def save_array(path: str | os.PathLike, array: np.ndarray) -> None:
    """`np.save` of any array to exactly `path` (no .npy added), as every output is written."""
    def write(tmp: str) -> None:
        with open(tmp, "wb") as out:  # a file object: np.save would add .npy to a path
            np.save(out, array)
    replace_atomically(path, write)


def open_embeddings(spec: str | os.PathLike, dim: Optional[int] = None,
                    fp16: bool = False) -> np.ndarray | StackedRows:
    """Memory-map an embedding matrix: `.npy` (shape from its header) or the raw LASER layout
    (dimension and float16 from `dim`/`fp16`, else from the provenance sidecar). A directory,
    glob or @LIST of such files (their sidecars left out) is their rows one after another. A
    damaged file (cut short, a broken header) or sidecar (not JSON) is one LaserError naming it."""
    paths = _embedding_files(str(spec))
    if len(paths) == 1:
        return _open_matrix(Path(paths[0]), dim, fp16)
    return StackedRows([_open_matrix(Path(path), dim, fp16) for path in paths], paths)


def _embedding_files(spec: str) -> list[str]:
    paths = expand(spec)
    listed = set(paths)
    return [path for path in paths
            if not (path.endswith(SIDECAR) and path[:-len(SIDECAR)] in listed)]


def _open_matrix(path: Path, dim: Optional[int], fp16: bool) -> np.ndarray:
    if not path.is_file():
        raise LaserError(f"{path}: no such embedding file")
    sidecar = read_sidecar(path)
    if npy.is_npy(path):
        return _open_npy(path, dim)
    if path.suffix.lower() == ".npy" and not dim:
        raise LaserError(f"{path}: not a .npy file (it does not start with a .npy header); "
                         "for raw embeddings named .npy, pass their dimension with --dim")
    dim = dim or raw_dimension(path, sidecar)
    fp16 = fp16 or sidecar.get("dtype") == "float16"
    dtype = np.dtype(np.float16 if fp16 else np.float32)
    size = path.stat().st_size
    row_bytes = dim * dtype.itemsize
    if size % row_bytes:
        raise LaserError(f"{path}: size {size} is not a multiple of {dim} x {dtype.itemsize} bytes;"
                         " wrong --dim or --fp16?")
    if size == 0:
        return np.zeros((0, dim), dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=(size // row_bytes, dim))


class StackedRows:
    """The rows of several embedding matrices one after another, read like one matrix: by
    slices and by lists of rows (each part stays memory-mapped)."""

    ndim = 2

    def __init__(self, parts: list[np.ndarray], names: list[str]):
        dims = {part.shape[1] for part in parts}
        if len(dims) > 1:
            found = ", ".join(f"{name}: {part.shape[1]}" for name, part in zip(names, parts))
            raise LaserError(f"embedding files of different dimensions ({found})")
        self.parts = parts
        self.starts = np.cumsum([0] + [part.shape[0] for part in parts])
        self.shape = (int(self.starts[-1]), parts[0].shape[1])
        self.dtype = np.result_type(*(part.dtype for part in parts))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step == 1:
                return self._range(start, max(start, stop))
            key = np.arange(start, stop, step)
        return self._rows(np.asarray(key))

    def _range(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop, from the parts they lie in only."""
        out = np.empty((stop - start, self.shape[1]), dtype=self.dtype)
        first = int(np.searchsorted(self.starts, start, side="right")) - 1
        for index in range(max(first, 0), len(self.parts)):
            begin = int(self.starts[index])
            if begin >= stop:
                break
            low, high = max(start, begin), min(stop, int(self.starts[index + 1]))
            out[low - start:high - start] = self.parts[index][low - begin:high - begin]
        return out

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        """The rows at `rows`, grouped by the part they lie in."""
        out = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        part_of = np.searchsorted(self.starts, rows, side="right") - 1
        order = np.argsort(part_of, kind="stable")
        bounds = np.searchsorted(part_of[order], np.arange(len(self.parts) + 1))
        for index in np.flatnonzero(np.diff(bounds)).tolist():
            chosen = order[bounds[index]:bounds[index + 1]]
            out[chosen] = self.parts[index][rows[chosen] - self.starts[index]]
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        rows = self._range(0, len(self))
        return rows if dtype is None else rows.astype(dtype)


def _open_npy(path: Path, dim: Optional[int]) -> np.ndarray:
    layout = npy.read_layout(path)
    shape = layout.shape
    if len(shape) != 2:
        raise LaserError(f"{path}: expected a 2-d embedding matrix, found shape {shape}")
    if dim is not None and shape[1] != dim:
        raise LaserError(f"{path}: embeddings have dimension {shape[1]}, not {dim}")
    return npy.memory_map(path, layout)


def raw_dimension(path: Path, sidecar: dict) -> int:
    """The dimension of a headerless file, as its provenance sidecar records it."""
    recorded = sidecar.get("dim")
    if isinstance(recorded, int) and recorded > 0:
        return recorded
    raise LaserError(f"{path}: raw embeddings without a sidecar ({path.name}.json): pass their "
                     "dimension with --dim (1024 for the official LASER models, 576 for the "
                     "shipped default)")
