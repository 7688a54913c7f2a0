"""A collection's documents kept on disk while they are paired: their sentences written once to
a file (a JSON list a document), read back by document number; only the names and where each document starts stay in
memory, so that pairing large collections does not hold their text."""
from __future__ import annotations

import json
from array import array
from typing import BinaryIO, Iterator

from .collection import Document


class SpooledCollection:
    """Documents appended to `path` (a new file, closed on leaving the `with` block and removed
    by its owner), their names in memory, each read back whole by its number (0-based, in the
    order added)."""

    def __init__(self, path: str):
        self.file: BinaryIO = open(path, "w+b")
        self.names: list[str] = []
        self.offsets = array("q", [0])

    def add(self, document: Document) -> None:
        data = json.dumps(document.sentences, ensure_ascii=False).encode("utf-8")
        self.file.seek(self.offsets[-1])
        self.file.write(data)
        self.offsets.append(self.offsets[-1] + len(data))
        self.names.append(document.name)

    def __len__(self) -> int:
        return len(self.names)

    def sentences(self, number: int) -> list[str]:
        """The sentences of document `number`."""
        self.file.seek(self.offsets[number])
        data = self.file.read(self.offsets[number + 1] - self.offsets[number])
        return json.loads(data)

    def __iter__(self) -> Iterator[list[str]]:
        """Every document's sentences, in order."""
        return (self.sentences(number) for number in range(len(self)))

    def __enter__(self) -> SpooledCollection:
        return self

    def __exit__(self, *exc_info) -> None:
        self.file.close()
