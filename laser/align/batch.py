"""Many document pairs to align: from a list (`SRC<TAB>TRG<TAB>OUT` a line) or two folders of
same-named files, and what a run over them did. The pairs run as the tasks of a work directory,
in this process or on Ray (`laser.distributed.align_tasks`)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LaserError, located
from ..io.sources import read_lines
from .collection import folder_names


@dataclass(frozen=True)
class DocumentPair:
    """Two documents to align (one sentence a line each) and the file of their beads."""

    src: str
    trg: str
    out: str


@dataclass
class FolderPairs:
    """The pairs of two folders' same-named files, and the names found on one side only."""

    pairs: list[DocumentPair]
    src_only: list[str] = field(default_factory=list)
    trg_only: list[str] = field(default_factory=list)


def pairs_from_list(path: str) -> list[DocumentPair]:
    """The pairs of a list file, one `SRC<TAB>TRG<TAB>OUT` a line (blank lines skipped); paths
    relative to the current directory. Each output once, never one of the inputs, in an existing
    directory: else one line naming the list's line."""
    pairs, seen = [], {}
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not all(fields):
            raise located(path, number, f"{len(fields)} column(s); expected SRC<TAB>TRG<TAB>OUT")
        pair = DocumentPair(*fields)
        out = os.path.abspath(pair.out)
        if out in seen:
            raise located(path, number, f"output {pair.out} is also the output of line "
                                        f"{seen[out]}")
        if out in (os.path.abspath(pair.src), os.path.abspath(pair.trg)):
            raise located(path, number, f"output {pair.out} is one of the pair's inputs")
        if not os.path.isdir(os.path.dirname(out)):
            raise located(path, number, f"{pair.out}: output directory does not exist")
        seen[out] = number
        pairs.append(pair)
    if not pairs:
        raise LaserError(f"{path}: no document pairs")
    return pairs


def pairs_from_folders(src_dir: str, trg_dir: str, out_dir: str) -> FolderPairs:
    """The pairs of the files of `src_dir` and `trg_dir` with the same relative name, each
    written to the same name under `out_dir` (created, with its subfolders)."""
    src_names, trg_names = folder_names(src_dir), folder_names(trg_dir)
    common = sorted(set(src_names) & set(trg_names))
    if not common:
        raise LaserError(f"{src_dir} and {trg_dir} hold no files of the same name")
    if os.path.abspath(out_dir) in (os.path.abspath(src_dir), os.path.abspath(trg_dir)):
        raise LaserError(f"{out_dir}: the output folder is an input folder")
    for name in common:
        (Path(out_dir) / name).parent.mkdir(parents=True, exist_ok=True)
    pairs = [DocumentPair(os.path.join(src_dir, name), os.path.join(trg_dir, name),
                          os.path.join(out_dir, name)) for name in common]
    return FolderPairs(pairs, sorted(set(src_names) - set(trg_names)),
                       sorted(set(trg_names) - set(src_names)))


@dataclass
class BatchSummary:
    """What a run of many pairs did: pairs aligned now and reused from an earlier run, the
    sentences of both sides, the beads written and those dropped under --min-score."""

    computed: int = 0
    reused: int = 0
    src_sentences: int = 0
    trg_sentences: int = 0
    beads: int = 0
    dropped: int = 0

    def add(self, record: dict) -> None:
        self.src_sentences += record["src_sentences"]
        self.trg_sentences += record["trg_sentences"]
        self.beads += record["beads"]
        self.dropped += record["dropped"]

    def line(self) -> str:
        dropped = f", {self.dropped} dropped under --min-score" if self.dropped else ""
        return (f"aligned {self.computed + self.reused} document pairs ({self.computed} now, "
                f"{self.reused} reused from an earlier run): {self.src_sentences} source and "
                f"{self.trg_sentences} target sentences, {self.beads} beads written{dropped}")
