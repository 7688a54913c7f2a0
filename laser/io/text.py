"""Reading sentence files line by line (validated, streamed) and writing text atomically."""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, TextIO

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
        for number, raw in enumerate(f, 1):
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


@contextmanager
def atomic_text_output(path: str) -> Iterator[TextIO]:
    """A text file that appears at `path` only when the block succeeds ('-' writes to stdout)."""
    if path == STDIN:
        yield sys.stdout
        sys.stdout.flush()
        return
    target = Path(path)
    if not target.parent.is_dir():
        raise LaserError(f"{path}: output directory does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            yield f
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
