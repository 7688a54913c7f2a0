"""The `.npy` format of embedding matrices: a header written before the row count is known,
and a reader that turns any damage (a cut, a broken header) into one line naming the file."""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import LaserError

PREFIX = b"\x93NUMPY"
MAGIC = PREFIX + b"\x01\x00"
# The header is written before the row count is known and patched at the end, so it
# gets a fixed size that holds any shape (numpy pads headers with spaces the same way).
HEADER_BYTES = 128
# Per format version: the bytes of the header's length, and the header's encoding.
LENGTH_BYTES = {1: 2, 2: 4, 3: 4}
ENCODINGS = {1: "latin1", 2: "latin1", 3: "utf8"}
KEYS = {"descr", "fortran_order", "shape"}


def header(dtype: np.dtype, rows: int, dim: int) -> bytes:
    """The header of a `rows` x `dim` matrix of `dtype`, always HEADER_BYTES long."""
    fields = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (
        np.dtype(dtype).str, rows, dim)
    body_size = HEADER_BYTES - len(MAGIC) - 2
    body = fields.ljust(body_size - 1) + "\n"
    return MAGIC + len(body).to_bytes(2, "little") + body.encode("latin1")


def is_npy(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(len(PREFIX)) == PREFIX


@dataclass(frozen=True)
class Layout:
    """Where an `.npy` file's array lies: its dtype, shape, order and first data byte."""

    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    offset: int

    @property
    def data_bytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def describe(self) -> str:
        return f"{' x '.join(map(str, self.shape))} {self.dtype.name}"


def damaged(path: Path, what: str) -> LaserError:
    return LaserError(f"{path}: damaged .npy file: {what}")


def read_layout(path: Path) -> Layout:
    """The layout an `.npy` file's header declares, checked against the file's size."""
    with open(path, "rb") as f:
        if f.read(len(PREFIX)) != PREFIX:
            raise LaserError(f"{path}: not an .npy file")
        version = f.read(2)[:1]
        major = version[0] if version else None
        if major not in LENGTH_BYTES:
            raise damaged(path, f"unknown format version {major}")
        length = f.read(LENGTH_BYTES[major])
        text = f.read(int.from_bytes(length, "little"))
        if len(length) < LENGTH_BYTES[major] or len(text) < int.from_bytes(length, "little"):
            raise damaged(path, "cut short inside its header")
        offset = f.tell()
    layout = Layout(*_fields(path, text, ENCODINGS[major]), offset=offset)
    _check_size(path, layout)
    return layout


def _fields(path: Path, text: bytes, encoding: str) -> tuple[np.dtype, tuple[int, ...], bool]:
    """dtype, shape and order from the header's dict literal."""
    try:
        fields = ast.literal_eval(text.decode(encoding))
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        fields = None
    if not isinstance(fields, dict) or set(fields) != KEYS:
        raise damaged(path, "its header is not the dict of descr, fortran_order and shape "
                            "that numpy writes")
    shape, fortran_order = fields["shape"], fields["fortran_order"]
    if not (isinstance(shape, tuple) and all(type(n) is int and n >= 0 for n in shape)):
        raise damaged(path, f"shape {shape!r} in its header")
    if not isinstance(fortran_order, bool):
        raise damaged(path, f"fortran_order {fortran_order!r} in its header")
    try:
        dtype = np.lib.format.descr_to_dtype(fields["descr"])
    except (TypeError, ValueError):
        raise damaged(path, f"dtype {fields['descr']!r} in its header") from None
    if dtype.hasobject or dtype.fields is not None:
        raise LaserError(f"{path}: holds {dtype}, not a matrix of numbers")
    return dtype, shape, fortran_order


def _check_size(path: Path, layout: Layout) -> None:
    """Refuse a file cut short (or grown) against the shape its header declares."""
    size, expected = path.stat().st_size, layout.offset + layout.data_bytes
    if size < expected:
        raise damaged(path, f"cut short: {size} bytes, where the {layout.describe()} matrix its "
                            f"header declares takes {expected}")
    if size > expected:
        raise damaged(path, f"{size} bytes, more than the {expected} the {layout.describe()} "
                            "matrix its header declares takes")


def memory_map(path: Path, layout: Layout) -> np.ndarray:
    """The array of a checked layout, memory-mapped read-only (an empty one in memory)."""
    if layout.data_bytes == 0:
        return np.zeros(layout.shape, dtype=layout.dtype)
    return np.memmap(path, dtype=layout.dtype, mode="r", offset=layout.offset,
                     shape=layout.shape, order="F" if layout.fortran_order else "C")
