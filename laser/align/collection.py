"""Collections of documents, as `laser align --pair-documents` and the many-documents runs read
them: a folder of files, one sentence a line (plain or compressed), each file a document named by
its path relative to the folder. Every reader yields `Document`s, so another kind of collection
(JSONL, WARC) plugs in as one more reader function."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..errors import LaserError
from ..io.sources import file_lines


@dataclass(frozen=True)
class Document:
    """One document of a collection: its name (relative to the collection), where it was read
    from, and its sentences in order."""

    name: str
    path: str
    sentences: list[str]


CollectionReader = Callable[[str], Iterator[Document]]


def folder_names(folder: str) -> list[str]:
    """The files under `folder` (recursively), as paths relative to it, sorted; hidden files and
    folders (a work directory, an editor's backup) are left out."""
    root = Path(folder)
    if not root.is_dir():
        raise LaserError(f"{folder}: not a directory")
    names = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
        base = Path(directory).relative_to(root)
        names += [(base / name).as_posix() for name in files if not name.startswith(".")]
    return sorted(names)


def read_folder(folder: str) -> Iterator[Document]:
    """The documents of a folder of sentence files, one at a time, in name order."""
    for name in folder_names(folder):
        path = os.path.join(folder, name)
        yield Document(name, path, list(file_lines(path)))


def read_collection(spec: str) -> Iterator[Document]:
    """The documents of a collection (today: a folder of sentence files)."""
    return read_folder(spec)
