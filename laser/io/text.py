"""Sentence files: read line by line (validated, streamed), counted, and looked up by line number."""
from __future__ import annotations

import os
from typing import Iterator, Optional

import numpy as np

# read_lines and check_input live in .sources, which reads every kind of input; sentence files'
# users import them from here with the rest.
from .sources import STDIN, check_input, count_file_lines, expand, read_lines  # noqa: F401


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


def is_regular_file(spec: str) -> bool:
    """An input that can be read twice: regular files only (not stdin, a pipe or a FIFO)."""
    return all(path != STDIN and os.path.isfile(path) for path in expand(spec))


def count_lines(spec: str) -> Optional[int]:
    """Lines as `read_lines` splits them (a final line without newline counts), read in blocks
    (compressed files decompressed); None for stdin, pipes and FIFOs, which cannot be read
    twice."""
    if not is_regular_file(spec):
        return None
    return sum(count_file_lines(path) for path in expand(spec))


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
