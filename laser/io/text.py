"""Sentence files: read line by line (validated, streamed), counted, and looked up by line number."""
from __future__ import annotations

import os
import stat
import sys
from contextlib import contextmanager
from typing import BinaryIO, Iterable, Iterator, Optional

import numpy as np

from ..errors import LaserError, located

STDIN = "-"


@contextmanager
def _open_binary(path: str) -> Iterator[BinaryIO]:
    if path == STDIN:
        yield sys.stdin.buffer
        return
    try:
        with open(path, "rb") as f:
            yield f
    except FileNotFoundError:
        raise LaserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise LaserError(f"{path}: is a directory, not a text file") from None
    except PermissionError:
        raise LaserError(f"{path}: permission denied") from None


def read_lines(path: str) -> Iterator[str]:
    """Yield the lines of a UTF-8 file (or stdin for '-') without their '\\n'.

    Lines are split on '\\n' only, as the official tools split them; a final line without a
    newline is still a line. Invalid UTF-8 and NUL bytes are errors naming file and line.
    """
    name = "<stdin>" if path == STDIN else path
    with _open_binary(path) as f:
        yield from decode_lines(name, f, 1)


def decode_lines(name: str, raw_lines: Iterable[bytes], first_number: int) -> Iterator[str]:
    """Raw lines (numbered from `first_number`) as text without their '\\n'; NUL bytes and
    invalid UTF-8 are errors naming file and line."""
    for number, raw in enumerate(raw_lines, first_number):
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if b"\x00" in raw:
            raise located(name, number, "contains a NUL byte; is this a text file?")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise located(name, number, f"invalid UTF-8 at byte {error.start + 1}") from None


def batched(lines: Iterator[str], size: int) -> Iterator[list[str]]:
    """Consecutive chunks of at most `size` lines."""
    chunk: list[str] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def check_input(path: str) -> None:
    """Refuse a missing, unreadable or directory input before any work (pipes and FIFOs are fine)."""
    if path == STDIN:
        return
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise LaserError(f"{path}: no such file") from None
    except PermissionError:
        raise LaserError(f"{path}: permission denied") from None
    if stat.S_ISDIR(mode):
        raise LaserError(f"{path}: is a directory, not a text file")
    if not os.access(path, os.R_OK):
        raise LaserError(f"{path}: permission denied")


def is_regular_file(path: str) -> bool:
    """A file that can be read twice (not stdin, a pipe or a FIFO)."""
    return path != STDIN and os.path.isfile(path)


def count_lines(path: str) -> Optional[int]:
    """Lines as `read_lines` splits them (a final line without newline counts), read in blocks;
    None for stdin, pipes and FIFOs, which cannot be read twice."""
    if not is_regular_file(path):
        return None
    count, last = 0, b"\n"
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


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
