"""Grouping the lines of one side into distinct sentences (--unify) in bounded memory.

Each line gets a 16-byte key, the BLAKE2b digest of its text (or of its normalised text,
`laser.text.dedup`). Lines are grouped chunk by chunk; each chunk's distinct keys, with their
first and last line in the chunk, are spilled to the work directory in 16 partitions by the
key's first 4 bits, and a partition too big for the budget is split again by the next 4 bits.
Each partition then gives every group its first and last line over the whole side, and one last
pass numbers the sentences by first appearance. Memory holds a chunk or a partition, never the
side: everything proportional to the lines is a file in the work directory, memory-mapped.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import exit_cleanly_on_signals, write_errors
from ..text.dedup import normalize_for_dedup

UNIFY_KEYS = ("line", "normalized")
KEY = np.dtype("S16")
# A group of one chunk: its key, and its first and last line (0-based, over the whole side).
RECORD = np.dtype([("key", KEY), ("first", "<i8"), ("last", "<i8")])
LINE = np.dtype("<i8")
FANOUT_BITS = 4
# Bytes of memory a chunk of lines takes while it is grouped (keys, sort order, records...).
BYTES_PER_CHUNK_LINE = 128


@dataclass(frozen=True)
class UnifyOptions:
    """What makes lines one sentence (`line`: identical text; `normalized`: identical text
    after `normalize_for_dedup`), and about how many bytes the grouping holds in memory at once
    (more goes to files in the work directory)."""

    key: str = "line"
    memory: int = 64 << 20

    def __post_init__(self) -> None:
        if self.key not in UNIFY_KEYS:
            raise LaserError(f"unknown unify key {self.key!r}; choose one of "
                             f"{', '.join(UNIFY_KEYS)}")
        if self.memory < BYTES_PER_CHUNK_LINE * 16:
            raise LaserError(f"the unify memory budget must be at least "
                             f"{BYTES_PER_CHUNK_LINE * 16} bytes")

    @property
    def chunk_lines(self) -> int:
        return self.memory // BYTES_PER_CHUNK_LINE


@dataclass
class Unified:
    """Distinct sentences of a side, numbered by first appearance: the sentence of each line, and
    the first and last line of each sentence; `spilled` when the groups went through partition
    files."""

    line_sentence: np.ndarray
    first_line: np.ndarray
    last_line: np.ndarray
    spilled: bool = False


def unify_lines(lines: Iterable[str], options: UnifyOptions = UnifyOptions(),
                workdir: Optional[str] = None) -> Unified:
    """Group `lines` (streamed once) into sentences. The arrays are memory maps of files that
    are already deleted (the space is freed when the arrays are); `workdir`: where they and the
    partitions go (default: the system's temp directory), removed on SIGTERM too."""
    exit_cleanly_on_signals()
    with tempfile.TemporaryDirectory(prefix=".laser-unify-", dir=workdir) as tmp, \
            write_errors(tmp):
        grouping = _Grouping(tmp, options)
        with open(grouping.path("chunk-first"), "wb") as chunk_first:
            for start, keys in _key_chunks(lines, options):
                chunk_first.write(grouping.add(start, keys).tobytes())
        return grouping.finish()




def _key_chunks(lines: Iterable[str], options: UnifyOptions) -> Iterator[tuple[int, np.ndarray]]:
    """(first line, keys) of consecutive chunks of `options.chunk_lines` lines: the key of a
    line is the 16-byte BLAKE2b digest of its text, or of its normalised text."""
    digests, start, count, size = bytearray(), 0, 0, options.chunk_lines
    blake2b = hashlib.blake2b
    texts = map(normalize_for_dedup, lines) if options.key == "normalized" else lines
    for text in texts:
        digests += blake2b(text.encode("utf-8"), digest_size=16).digest()
        count += 1
        if count - start == size:
            yield start, np.frombuffer(bytes(digests), dtype=KEY)
            digests, start = bytearray(), count
    if count > start:
        yield start, np.frombuffer(bytes(digests), dtype=KEY)


def _groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For keys in any order: the stable sort order, the sorted positions where each group
    starts and ends (inclusive), and the group of each sorted position."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = ranked[1:] != ranked[:-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(keys)) - 1
    return order, starts, ends, np.cumsum(new) - 1


class _Grouping:
    """The files of one grouping: each line's first line in its chunk (later its sentence), the
    chunks' groups (held in memory until they outgrow half the budget, then partitions), and
    each chunk group's first and last line over the side."""

    def __init__(self, folder: str, options: UnifyOptions):
        self.folder, self.memory, self.chunk_lines = folder, options.memory, options.chunk_lines
        self.lines = 0
        self.held: list[np.ndarray] = []
        self.held_bytes = 0
        self.spilled = False

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def add(self, start: int, keys: np.ndarray) -> np.ndarray:
        """Group one chunk of keys, lines start.. of the side; returns each line's first line in
        the chunk."""
        order, starts, ends, group = _groups(keys)
        first, last = order[starts] + start, order[ends] + start
        chunk_first = np.empty(len(keys), dtype=LINE)
        chunk_first[order] = first[group]
        records = np.empty(len(starts), dtype=RECORD)
        records["key"], records["first"], records["last"] = keys[order[starts]], first, last
        self._hold(records)
        self.lines = start + len(keys)
        return chunk_first

    def _hold(self, records: np.ndarray) -> None:
        if not self.spilled and self.held_bytes + records.nbytes <= self.memory // 2:
            self.held.append(records)
            self.held_bytes += records.nbytes
            return
        for held in self.held + [records]:
            _spill(held, self.path("part-"), 0)
        self.held, self.held_bytes, self.spilled = [], 0, True

    def finish(self) -> Unified:
        """Every group's first and last line over the side, then the sentences."""
        if self.lines == 0:
            empty = np.zeros(0, dtype=LINE)
            return Unified(empty, empty, empty)
        group_first = self._lines_file("group-first", "w+")
        group_last = self._lines_file("group-last", "w+")
        if self.spilled:
            for part in range(1 << FANOUT_BITS):
                self._resolve_file(f"{self.path('part-')}{part:x}", 1, group_first, group_last)
        else:
            _resolve(np.concatenate(self.held), group_first, group_last)
        return self._sentences(group_first, group_last)

    def _lines_file(self, name: str, mode: str) -> np.memmap:
        return np.memmap(self.path(name), dtype=LINE, mode=mode, shape=(self.lines,))

    def _resolve_file(self, path: str, depth: int, group_first: np.ndarray,
                      group_last: np.ndarray) -> None:
        """Resolve one partition file, split by the key's next 4 bits while it outgrows half
        the budget (a key is in at most one record per chunk, so splitting always ends)."""
        if not os.path.exists(path):
            return
        if os.path.getsize(path) <= self.memory // 2 or depth * FANOUT_BITS >= KEY.itemsize * 8:
            _resolve(np.fromfile(path, dtype=RECORD), group_first, group_last)
            os.remove(path)
            return
        for part in _read_records(path, self.memory // 2):
            _spill(part, path, depth)
        os.remove(path)
        for part in range(1 << FANOUT_BITS):
            self._resolve_file(f"{path}{part:x}", depth + 1, group_first, group_last)

    def _sentences(self, group_first: np.ndarray, group_last: np.ndarray) -> Unified:
        """Sentences numbered by first appearance, chunk by chunk: each line's chunk group
        gives its first line over the side; a line that is its own first line starts a
        sentence. The sentence of each line is written over its chunk's first line."""
        line_sentence = self._lines_file("chunk-first", "r+")
        sentence_at = self._lines_file("sentence-at", "w+")
        step, sentences = self.chunk_lines, 0
        with open(self.path("first"), "wb") as first_out, \
                open(self.path("last"), "wb") as last_out:
            for start in range(0, self.lines, step):
                lines = np.arange(start, min(start + step, self.lines), dtype=LINE)
                first = group_first[line_sentence[lines[0]:lines[-1] + 1]]
                new = lines[first == lines]
                sentence_at[new] = np.arange(sentences, sentences + len(new))
                sentences += len(new)
                line_sentence[lines[0]:lines[-1] + 1] = sentence_at[first]
                first_out.write(new.tobytes())
                last_out.write(np.asarray(group_last[new], dtype=LINE).tobytes())
        line_sentence.flush()
        return Unified(self._lines_file("chunk-first", "r"), _mapped(self.path("first")),
                       _mapped(self.path("last")), self.spilled)


def _nibble(keys: np.ndarray, depth: int) -> np.ndarray:
    """Bits 4 depth .. 4 depth + 3 of each key (0-15)."""
    byte = keys.view(np.uint8).reshape(-1, KEY.itemsize)[:, depth // 2]
    return (byte >> 4) if depth % 2 == 0 else (byte & 15)


def _spill(records: np.ndarray, prefix: str, depth: int) -> None:
    """Append records to PREFIX0..PREFIXf by bits `depth` of their keys, in their order."""
    part = _nibble(np.ascontiguousarray(records["key"]), depth)
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange((1 << FANOUT_BITS) + 1))
    for index in range(1 << FANOUT_BITS):
        chosen = order[bounds[index]:bounds[index + 1]]
        if len(chosen):
            with open(f"{prefix}{index:x}", "ab") as out:
                out.write(records[chosen].tobytes())


def _read_records(path: str, size: int) -> Iterator[np.ndarray]:
    """The records of a partition file, about `size` bytes at a time."""
    with open(path, "rb") as f:
        block = max(1, size // RECORD.itemsize) * RECORD.itemsize
        for data in iter(lambda: f.read(block), b""):
            yield np.frombuffer(data, dtype=RECORD)


def _resolve(records: np.ndarray, group_first: np.ndarray, group_last: np.ndarray) -> None:
    """The first and last line over the side of each chunk group among `records` (all the
    records of their keys, in chunk order), stored at the group's first line in its chunk."""
    order, starts, ends, group = _groups(records["key"])
    ranked = records[order]
    group_first[ranked["first"]] = ranked["first"][starts][group]
    group_last[ranked["first"]] = ranked["last"][ends][group]


def _mapped(path: str) -> np.ndarray:
    """A file of int64 line numbers, memory-mapped (an empty one as an empty array)."""
    if os.path.getsize(path) == 0:
        return np.zeros(0, dtype=LINE)
    return np.memmap(path, dtype=LINE, mode="r")
