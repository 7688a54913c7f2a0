"""The `laser knn build` indexes a server searches, and the check that queries fit one."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..errors import LaserError
from ..search.index import IndexMeta, check_queries, load_index, search
from ..search.vectors import Vectors
from .limits import RequestError
from .models import ServedModel

if TYPE_CHECKING:
    import faiss


class TextLines:
    """The lines of a text file read by number: their byte offsets are kept, the text is not."""

    def __init__(self, path: str):
        self.path = path
        offsets, position = [0], 0
        with open(path, "rb") as f:
            for line in f:
                position += len(line)
                offsets.append(position)
        self.offsets = np.array(offsets, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lines(self, numbers: list[int]) -> list[str]:
        with open(self.path, "rb") as f:
            texts = []
            for number in numbers:
                f.seek(self.offsets[number])
                raw = f.read(int(self.offsets[number + 1] - self.offsets[number]))
                texts.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        return texts


@dataclass(frozen=True)
class ServedIndex:
    """A loaded index, what requests call it by, and the sentences of its rows when it has them."""

    name: str
    path: str
    index: faiss.Index
    meta: IndexMeta
    texts: Optional[TextLines]

    def describe(self) -> dict:
        return {"name": self.name, "count": self.meta.count, "dim": self.meta.dim,
                "metric": self.meta.metric, "factory": self.meta.factory,
                "model_sha256": self.meta.model, "has_text": self.texts is not None}


def load_served_index(spec: str) -> ServedIndex:
    """`NAME=PATH` or `PATH` (named after its file) of an index `laser knn build` wrote."""
    name, equals, path = spec.partition("=")
    if not equals:
        name, path = Path(spec).stem, spec
    index, meta = load_index(path)
    texts = TextLines(meta.text) if meta.text and Path(meta.text).is_file() else None
    if texts is not None and len(texts) != meta.count:
        raise LaserError(f"{path}: {meta.text} has {len(texts)} lines but the index holds "
                         f"{meta.count} rows")
    return ServedIndex(name, path, index, meta, texts)


def check_embedding_space(index: ServedIndex, model: ServedModel) -> None:
    """Refuse (409) queries embedded by a model other than the one the index was built with."""
    try:
        check_queries(index.name, index.meta, model.dim, model.sha256)
    except LaserError as error:
        raise RequestError(409, f"{error}; ask for the index's model with \"model\"",
                           "model_mismatch") from None


def nearest(index: ServedIndex, rows: np.ndarray, k: int) -> list[list[dict]]:
    """The k nearest indexed rows of each query row: id, score and (when known) text."""
    vectors = Vectors(rows, name="queries", normalize=index.meta.metric == "cosine")
    found = search(index.index, vectors, k)
    results = []
    for sims, ids in zip(found.sims.tolist(), found.ids.tolist()):
        kept = [(target, sim) for target, sim in zip(ids, sims) if target >= 0]
        texts = index.texts.lines([target for target, _ in kept]) if index.texts else None
        results.append([{"id": target, "score": sim, **({"text": texts[rank]} if texts else {})}
                        for rank, (target, sim) in enumerate(kept)])
    return results
