"""Reading and writing embedding matrices: `.npy` and the headerless LASER layout, streamed and atomic."""
from __future__ import annotations

import ast
import os
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO, Optional

import numpy as np

from ..errors import LaserError
from .atomic import atomic_path
from .sidecar import SUFFIX as SIDECAR, read_sidecar
from .sources import expand

FORMATS = ("npy", "raw")
NPY_MAGIC = b"\x93NUMPY\x01\x00"
# The header is written before the row count is known and patched at the end, so it
# gets a fixed size that holds any shape (numpy pads headers with spaces the same way).
NPY_HEADER_BYTES = 128


def _npy_header(dtype: np.dtype, rows: int, dim: int) -> bytes:
    fields = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (
        np.dtype(dtype).str, rows, dim)
    body_size = NPY_HEADER_BYTES - len(NPY_MAGIC) - 2
    body = fields.ljust(body_size - 1) + "\n"
    return NPY_MAGIC + len(body).to_bytes(2, "little") + body.encode("latin1")


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
                self._file.write(_npy_header(self.dtype, 0, self.dim))
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
            self._file.write(_npy_header(self.dtype, self.rows, self.dim))
        self._stack.__exit__(exc_type, exc, tb)


def _read_npy_header(path: Path) -> tuple[np.dtype, tuple[int, ...], int]:
    with open(path, "rb") as f:
        magic = f.read(6)
        if magic != b"\x93NUMPY":
            raise LaserError(f"{path}: not an .npy file")
        major = f.read(2)[0]
        size_bytes = 2 if major == 1 else 4
        header_len = int.from_bytes(f.read(size_bytes), "little")
        header = ast.literal_eval(f.read(header_len).decode("latin1"))
        return np.dtype(header["descr"]), tuple(header["shape"]), 6 + 2 + size_bytes + header_len


def open_embeddings(spec: str | os.PathLike, dim: Optional[int] = None,
                    fp16: bool = False) -> np.ndarray | StackedRows:
    """Memory-map an embedding matrix: `.npy` (shape from its header) or the raw LASER layout
    (dimension and float16 from `dim`/`fp16`, else from the provenance sidecar). A directory,
    glob or @LIST of such files (their sidecars left out) is their rows one after another."""
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
    with open(path, "rb") as f:
        is_npy = f.read(6) == b"\x93NUMPY"
    if is_npy:
        dtype, shape, _ = _read_npy_header(path)
        if len(shape) != 2:
            raise LaserError(f"{path}: expected a 2-d embedding matrix, found shape {shape}")
        if dim is not None and shape[1] != dim:
            raise LaserError(f"{path}: embeddings have dimension {shape[1]}, not {dim}")
        if shape[0] == 0:
            return np.zeros(shape, dtype=dtype)
        return np.load(path, mmap_mode="r")
    dim = dim or raw_dimension(path)
    fp16 = fp16 or read_sidecar(path).get("dtype") == "float16"
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
        pieces = [part[max(start - first, 0):max(min(stop - first, len(part)), 0)]
                  for part, first in zip(self.parts, self.starts[:-1].tolist())]
        return np.concatenate([np.asarray(piece, dtype=self.dtype) for piece in pieces])

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        part_of = np.searchsorted(self.starts, rows, side="right") - 1
        for index in np.unique(part_of).tolist():
            chosen = part_of == index
            out[chosen] = self.parts[index][rows[chosen] - self.starts[index]]
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        rows = self._range(0, len(self))
        return rows if dtype is None else rows.astype(dtype)


def raw_dimension(path: str | os.PathLike) -> int:
    """The dimension of a headerless file, as its provenance sidecar records it."""
    recorded = read_sidecar(path).get("dim")
    if isinstance(recorded, int) and recorded > 0:
        return recorded
    raise LaserError(f"{path}: raw embeddings without a {Path(path).name}.json sidecar: pass their "
                     "dimension with --dim (1024 for the official LASER models, 576 for the "
                     "shipped default)")
