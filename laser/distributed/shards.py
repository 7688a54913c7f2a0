"""Line-range shards of text files and the manifest of finished ones: what lets a distributed
job split its input, run the shards anywhere and, after a crash, redo only the missing ones."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ..errors import LaserError
from ..io.atomic import atomic_text_output, remove_temp_files
from ..io.locks import create_work_dir, holds
from ..io.sources import STDIN, display_name, expand, file_blocks, file_bytes
from ..text.languages import AUTO

READ_BLOCK = 1 << 24
NEWLINE = 10


def content_digest() -> "hashlib._Hash":
    """The hash that fingerprints a shard's bytes (fast, 128 bits)."""
    return hashlib.blake2b(digest_size=16)


@dataclass(frozen=True)
class Shard:
    """Lines `start` to `stop` (0-based, stop excluded) of the file at `path` (absolute): `size`
    bytes from byte `offset` of its text (decompressed), whose content hash is `digest`; `index`
    counts the shards of the whole input; `shown` is the file as the user named it, for
    messages (default: `path`)."""

    path: str
    index: int
    start: int
    stop: int
    offset: int
    size: int
    digest: str
    shown: str = ""

    @property
    def file_name(self) -> str:
        """The file as messages name it."""
        return self.shown or self.path

    @property
    def lines(self) -> int:
        return self.stop - self.start

    @property
    def name(self) -> str:
        return f"shard-{self.index:06d}"


@dataclass
class _Planner:
    """Cuts the bytes of one file into shards of `shard_lines` lines, hashing each on the way;
    they are numbered from `first_index`."""

    path: str
    shard_lines: int
    first_index: int
    shown: str = ""
    shards: list[Shard] = field(default_factory=list)
    start_line: int = 0
    offset: int = 0
    size: int = 0
    lines: int = 0
    digest: "hashlib._Hash" = field(default_factory=content_digest)
    unterminated: bool = False  # the bytes so far end inside a line

    def feed(self, block: bytes) -> None:
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == NEWLINE) + 1
        used, position = 0, 0
        while len(ends) - used >= self.shard_lines - self.lines:
            taken = self.shard_lines - self.lines
            used += taken
            cut = int(ends[used - 1])
            self._take(block[position:cut], taken)
            self._close()
            position = cut
        self._take(block[position:], len(ends) - used)
        self.unterminated = not block.endswith(b"\n")

    def finish(self) -> list[Shard]:
        """All shards; bytes after the last newline are one more line, as `read_lines` counts."""
        if self.size:
            self.lines += self.unterminated
            self._close()
        return self.shards

    def _take(self, data: bytes, lines: int) -> None:
        self.digest.update(data)
        self.size += len(data)
        self.lines += lines

    def _close(self) -> None:
        self.shards.append(Shard(self.path, self.first_index + len(self.shards), self.start_line,
                                 self.start_line + self.lines, self.offset, self.size,
                                 self.digest.hexdigest(), self.shown))
        self.start_line += self.lines
        self.offset += self.size
        self.size, self.lines = 0, 0
        self.digest = content_digest()


def plan_shards(spec: str, shard_lines: int) -> list[Shard]:
    """Shards of `shard_lines` lines (the last of each file shorter) covering the files of an
    input (a file, directory, glob or @LIST, compressed or not), in one streamed pass."""
    if shard_lines < 1:
        raise LaserError("--shard-lines must be at least 1")
    shards: list[Shard] = []
    for path in expand(spec):
        if path == STDIN or not os.path.isfile(path):
            raise LaserError(f"{display_name(path)}: a distributed job reads regular files (not "
                             "stdin or a pipe) that every node can see")
        planner = _Planner(os.path.abspath(path), shard_lines, len(shards), path)
        for block in file_blocks(path, READ_BLOCK):
            planner.feed(block)
        shards += planner.finish()
    return shards


def read_shard(shard: Shard) -> bytes:
    """The bytes of a shard, refused when its file changed since it was planned."""
    data = file_bytes(shard.path, shard.offset, shard.size)
    digest = content_digest()
    digest.update(data)
    if digest.hexdigest() != shard.digest:
        raise LaserError(f"{shard.file_name}: lines {shard.start + 1}-{shard.stop} changed while the "
                         "job ran; run it again")
    return data


MANIFEST = "manifest.json"


@dataclass
class Manifest:
    """The work directory's record of finished shards (`manifest.json`): the job they belong to
    (model sha256 and options) and, per shard, its line range and content digest, and the
    lines of it that are not UTF-8 text that --bad-lines replace decoded (counted, the first
    few named, for the report of a resumed run).

    Only the driver writes it, atomically, after every finished shard; a record counts only
    for the same job, the same lines with the same digest, and a shard file still present.
    """

    directory: Path
    job: dict
    done: dict[int, dict] = field(default_factory=dict)
    encoder: Optional[dict] = None  # what the workers' model reported, for the sidecar

    @classmethod
    def open(cls, directory: str | os.PathLike, job: dict) -> "Manifest":
        """The manifest of `directory` (created if missing); records of another job are dropped."""
        directory = Path(directory)
        create_work_dir(directory)
        if holds(directory):  # what a killed run was writing: no other run writes here
            remove_temp_files(directory, lambda name: name == MANIFEST or name.startswith("shard-"))
        stored = read_json(directory / MANIFEST)
        if stored.get("job") != job:
            return cls(directory, job)
        done = {int(index): record for index, record in stored.get("done", {}).items()}
        return cls(directory, job, done, stored.get("encoder"))

    def shard_path(self, shard: Shard) -> Path:
        return self.directory / f"{shard.name}.npy"

    def languages_path(self, shard: Shard) -> Optional[str]:
        """Where a shard's identified languages go (as `laser lid` prints them), with lang
        `auto`; None otherwise."""
        return str(self.directory / f"{shard.name}.lang") if self.job.get("lang") == AUTO else None

    def is_done(self, shard: Shard) -> bool:
        record = self.done.get(shard.index)
        languages = self.languages_path(shard)
        expected = _shard_record(shard)
        return (record is not None and {key: record.get(key) for key in expected} == expected
                and self.shard_path(shard).is_file()
                and (languages is None or os.path.isfile(languages)))

    def mark_done(self, shard: Shard, bad_lines: Optional[dict] = None) -> None:
        """Record a finished shard, with the count and the first few names of its lines that
        were not UTF-8 text (`bad_lines`: `count` and `named`, when it had any)."""
        self.done[shard.index] = {**_shard_record(shard),
                                  **({"bad_lines": bad_lines} if bad_lines else {})}
        self.save()

    def bad_lines(self, shard: Shard) -> dict:
        """The count and first few names of a finished shard's lines that were not UTF-8 text."""
        return self.done.get(shard.index, {}).get("bad_lines") or {"count": 0, "named": []}

    def save(self) -> None:
        record = {"job": self.job, "encoder": self.encoder,
                  "done": {str(index): self.done[index] for index in sorted(self.done)}}
        with atomic_text_output(str(self.directory / MANIFEST)) as f:
            json.dump(record, f, indent=1)
            f.write("\n")


def _shard_record(shard: Shard) -> dict:
    """What a finished shard's rows depend on: its file, its lines and their bytes (not where
    they sit in the file, so an edit elsewhere keeps it)."""
    return {"path": shard.path, "start": shard.start, "stop": shard.stop,
            "digest": shard.digest}


def read_json(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
