"""Grouping the lines of one side into distinct sentences (--unify) in bounded memory.

Each line gets a 16-byte key, the BLAKE2b digest of its text (or of its normalised text,
`laser.text.dedup`). Lines are grouped chunk by chunk; each chunk's distinct keys, with their
first and last line in the chunk, are spilled to the work directory in 16 partitions by the
key's first 4 bits, and a partition too big for the budget is split again by the next 4 bits.
Each partition then gives every group its first and last line over the whole side, and one last
pass numbers the sentences by first appearance. Memory holds a chunk or a partition, never the
side: everything proportional to the lines is a file in the work directory, memory-mapped.

The same steps run apart for a side of many files (`laser mine`'s split tasks): each file's
lines grouped into partition files of its own (`partition_lines`), each partition resolved over
all the files (`resolve_partition`), then the sentences numbered (`number_lines`).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Sequence

import numpy as np

from ..errors import LaserError
from ..io.atomic import exit_cleanly_on_signals, write_errors
from ..text.dedup import normalize_for_dedup

UNIFY_KEYS = ("line", "normalized")
KEY = np.dtype("S16")
# A group of one chunk: its key, and its first and last line (0-based, over the whole side).
RECORD = np.dtype([("key", KEY), ("first", "<i8"), ("last", "<i8")])
LINE = np.dtype("<i8")
# A resolved chunk group: its first line in its chunk (`at`), its first and last line over the side.
RESOLVED = np.dtype([("at", "<i8"), ("first", "<i8"), ("last", "<i8")])
# Called with chunk groups resolved: (at, first, last) as in RESOLVED.
Sink = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
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
    with _work_folder(workdir) as tmp:
        grouping = _Grouping(tmp, options)
        grouping.group(lines)
        return grouping.finish()


def partition_lines(lines: Iterable[str], options: UnifyOptions, prefix: str) -> int:
    """Group one part of a side (a file; line numbers from 0 in it) into PREFIXpart-0..f, its
    chunk groups by the key's first 4 bits, and PREFIXchunk-first, each line's first line in its
    chunk (int64); returns its line count."""
    for stale in range(1 << FANOUT_BITS):  # of an interrupted attempt
        if os.path.exists(f"{prefix}part-{stale:x}"):
            os.remove(f"{prefix}part-{stale:x}")
    grouping = _Grouping(prefix, options, spill=True)
    grouping.group(lines)
    return grouping.lines


def resolve_partition(parts: Sequence[tuple[str, int]], output: str,
                      options: UnifyOptions) -> int:
    """One partition over a side's parts, from their partition files and the first line of each
    part (in the side's order): every chunk group's first and last line over the side, written
    to `output` as RESOLVED records; returns how many."""
    combined = f"{output}.records"
    with write_errors(os.path.dirname(output) or "."):
        with open(combined, "wb") as out:
            for path, offset in parts:
                if os.path.exists(path):
                    for block in _read_records(path, options.memory // 2):
                        block = block.copy()
                        block["first"] += offset
                        block["last"] += offset
                        out.write(block.tobytes())
        if os.path.getsize(combined) == 0:
            os.remove(combined)  # no key of this partition in the side
        count = 0
        with open(f"{output}.tmp", "wb") as out:
            def sink(at: np.ndarray, first: np.ndarray, last: np.ndarray) -> None:
                nonlocal count
                rows = np.empty(len(at), dtype=RESOLVED)
                rows["at"], rows["first"], rows["last"] = at, first, last
                out.write(rows.tobytes())
                count += len(rows)
            _resolve_file(combined, 1, sink, options.memory)
        os.replace(f"{output}.tmp", output)
    return count


def number_lines(chunk_firsts: Sequence[tuple[str, int]], resolved: Sequence[str], lines: int,
                 options: UnifyOptions, workdir: Optional[str] = None) -> Unified:
    """The sentences of a side from its parts' PREFIXchunk-first files (with the first line of
    each part) and its partitions resolved (`resolve_partition`), as `unify_lines` returns
    them."""
    with _work_folder(workdir) as tmp:
        grouping = _Grouping(tmp, options, spill=True)
        grouping.lines = lines
        with open(grouping.path("chunk-first"), "wb") as out:
            for path, offset in chunk_firsts:
                for block in _blocks(path, options.memory // 2, LINE):
                    out.write((block + offset).tobytes())
        return grouping.finish(resolved)


@contextmanager
def _work_folder(workdir: Optional[str]) -> Iterator[str]:
    """A temporary folder for the grouping's files (PREFIX), removed on exit and on SIGTERM."""
    exit_cleanly_on_signals()
    with tempfile.TemporaryDirectory(prefix=".laser-unify-", dir=workdir) as tmp, \
            write_errors(tmp):
        yield os.path.join(tmp, "")


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
    """The files of one grouping (PREFIXname): each line's first line in its chunk (later its
    sentence), the chunks' groups (held in memory until they outgrow half the budget, or from
    the start with `spill`, then partitions), and each chunk group's first and last line over
    the side."""

    def __init__(self, prefix: str, options: UnifyOptions, spill: bool = False):
        self.prefix, self.memory, self.chunk_lines = prefix, options.memory, options.chunk_lines
        self.options = options
        self.lines = 0
        self.held: list[np.ndarray] = []
        self.held_bytes = 0
        self.spilled = spill

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def group(self, lines: Iterable[str]) -> None:
        """Group the lines a chunk at a time (PREFIXchunk-first, the held or spilled groups)."""
        with open(self.path("chunk-first"), "wb") as chunk_first:
            for start, keys in _key_chunks(lines, self.options):
                chunk_first.write(self.add(start, keys).tobytes())

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

    def finish(self, resolved: Sequence[str] = ()) -> Unified:
        """Every group's first and last line over the side (from this grouping's partitions, or
        from `resolved` files of RESOLVED records), then the sentences."""
        if self.lines == 0:
            empty = np.zeros(0, dtype=LINE)
            return Unified(empty, empty, empty)
        group_first = self._lines_file("group-first", "w+")
        group_last = self._lines_file("group-last", "w+")

        def scatter(at: np.ndarray, first: np.ndarray, last: np.ndarray) -> None:
            group_first[at], group_last[at] = first, last
        if resolved:
            for path in resolved:
                for data in _blocks(path, self.memory // 2, RESOLVED):
                    scatter(data["at"], data["first"], data["last"])
        elif self.spilled:
            for part in range(1 << FANOUT_BITS):
                _resolve_file(f"{self.path('part-')}{part:x}", 1, scatter, self.memory)
        else:
            _resolve(np.concatenate(self.held), scatter)
        return self._sentences(group_first, group_last)

    def _lines_file(self, name: str, mode: str) -> np.memmap:
        return np.memmap(self.path(name), dtype=LINE, mode=mode, shape=(self.lines,))

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
    return _blocks(path, size, RECORD)


def _blocks(path: str, size: int, dtype: np.dtype) -> Iterator[np.ndarray]:
    """The `dtype` records of a file, about `size` bytes at a time."""
    with open(path, "rb") as f:
        block = max(1, size // dtype.itemsize) * dtype.itemsize
        for data in iter(lambda: f.read(block), b""):
            yield np.frombuffer(data, dtype=dtype)


def _resolve_file(path: str, depth: int, sink: Sink, memory: int) -> None:
    """Resolve one partition file, split by the key's next 4 bits while it outgrows half the
    budget (a key is in at most one record per chunk, so splitting always ends)."""
    if not os.path.exists(path):
        return
    if os.path.getsize(path) <= memory // 2 or depth * FANOUT_BITS >= KEY.itemsize * 8:
        _resolve(np.fromfile(path, dtype=RECORD), sink)
        os.remove(path)
        return
    for part in _read_records(path, memory // 2):
        _spill(part, path, depth)
    os.remove(path)
    for part in range(1 << FANOUT_BITS):
        _resolve_file(f"{path}{part:x}", depth + 1, sink, memory)


def _resolve(records: np.ndarray, sink: Sink) -> None:
    """The first and last line over the side of each chunk group among `records` (all the
    records of their keys, in chunk order), given to `sink` with the group's first line in its
    chunk."""
    order, starts, ends, group = _groups(records["key"])
    ranked = records[order]
    sink(ranked["first"], ranked["first"][starts][group], ranked["last"][ends][group])


def _mapped(path: str) -> np.ndarray:
    """A file of int64 line numbers, memory-mapped (an empty one as an empty array)."""
    if os.path.getsize(path) == 0:
        return np.zeros(0, dtype=LINE)
    return np.memmap(path, dtype=LINE, mode="r")
