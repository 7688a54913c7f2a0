"""Collections of documents, as `laser align --pair-documents` and the many-documents runs read
them: a folder of files or one file. A file of plain text is one document, one sentence a line
(a paragraph a line with --split-sentences), named by its path relative to the folder; a WARC,
WET or JSON-lines file (`laser.io.documents`, told by its content or --input-format) holds a
document a record, its paragraphs split into sentences in the side's language, named by its URL
(or WARC record id, or JSON `id` field), else `FILE:NUMBER` (its record's number in the file)."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from ..errors import LaserError
from ..io.documents import LINES, Document as Record, DocumentOptions, file_documents, \
    input_format
from ..io.sources import file_lines


@dataclass(frozen=True)
class Document:
    """One document of a collection: its name (relative to the collection), where it was read
    from, and its sentences in order."""

    name: str
    path: str
    sentences: list[str]


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


def collection_files(spec: str) -> list[tuple[str, str]]:
    """The files of a collection, each with its name: a folder's files by their path relative
    to it, one file by its own name."""
    if os.path.isdir(spec):
        return [(os.path.join(spec, name), name) for name in folder_names(spec)]
    if not os.path.isfile(spec):
        raise LaserError(f"{spec}: no such file or folder")
    return [(spec, os.path.basename(spec))]


def read_collection(spec: str, options: DocumentOptions = DocumentOptions()) -> Iterator[Document]:
    """The documents of a collection, one at a time, file after file in name order (`options`
    with the side's language where documents are split into sentences)."""
    for path, name in collection_files(spec):
        yield from _file_collection(path, name, options)


def _file_collection(path: str, name: str, options: DocumentOptions) -> Iterator[Document]:
    from ..cleaning.sentences import document_sentences
    if input_format(path, options) == LINES:
        lines = list(file_lines(path))
        if options.split:
            lines = [sentence.text for sentence in
                     document_sentences(Record(path, name, lines), options)]
        yield Document(name, path, lines)
        return
    if not options.lang:
        raise LaserError(f"{path}: its documents are split into sentences in their language, "
                         "which the options lack")
    split = replace(options, split=True)
    for record in file_documents(path, options):
        sentences = [sentence.text for sentence in document_sentences(record, split)]
        yield Document(f"{name}:{record.name}" if record.numbered else record.name, path,
                       sentences)
