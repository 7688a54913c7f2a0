"""What pairing documents keeps on disk rather than in memory: each collection's documents and
the beads of every candidate pair, written once to a file (pickled, one record after another)
and read back by number; only where each record starts (and the documents' names) stays in
memory, so that pairing large collections does not hold their text or their alignments."""
from __future__ import annotations

import pickle
from array import array
from typing import Any, BinaryIO, Iterator

from .collection import Document


class Spool:
    """Records appended to `path` (a new file, closed on leaving the `with` block and removed by
    its owner), each read back by its number (0-based, in the order added)."""

    def __init__(self, path: str):
        self.file: BinaryIO = open(path, "w+b")
        self.offsets = array("q", [0])

    def add(self, record: Any) -> int:
        """Write `record`; its number."""
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        self.file.seek(self.offsets[-1])
        self.file.write(data)
        self.offsets.append(self.offsets[-1] + len(data))
        return len(self.offsets) - 2

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, number: int) -> Any:
        self.file.seek(self.offsets[number])
        return pickle.loads(self.file.read(self.offsets[number + 1] - self.offsets[number]))

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.file.close()


class SpooledCollection(Spool):
    """A collection's documents: their sentences spooled, their names in memory."""

    def __init__(self, path: str):
        super().__init__(path)
        self.names: list[str] = []

    def add(self, document: Document) -> int:
        self.names.append(document.name)
        return super().add(document.sentences)

    def sentences(self, number: int) -> list[str]:
        """The sentences of document `number`."""
        return self[number]

    def __iter__(self) -> Iterator[list[str]]:
        """Every document's sentences, in order."""
        return (self[number] for number in range(len(self)))
