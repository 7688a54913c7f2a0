"""`laser.Index`: a FAISS index of sentence embeddings for Python, as `laser knn build` and
`laser knn search` make and use them: built from numpy rows, an embeddings file or sentences,
saved and loaded with its metadata (INDEX.json: the model and space of its rows), searched with
the same; queries of another embedding space are refused."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..models.spaces import Origin
from .index import IndexMeta, build_index, check_query_dim, load_index, save_index, search
from .sides import Data, Side, side_rows
from .vectors import Vectors

if TYPE_CHECKING:
    import faiss


class Index:
    """Rows to search, with their metric and origin (model, space, checkpoint).

    >>> index = Index.build(sentences, lang="en")
    >>> scores, ids = index.search(["Where is the station?"], k=3, lang="en")
    """

    def __init__(self, index: faiss.Index, meta: IndexMeta, name: str = "the index"):
        self.index, self.meta, self.name = index, meta, name

    @classmethod
    def build(cls, data: Data, lang: Optional[str] = None, factory: str = "Flat",
              metric: str = "cosine", model: Optional[str] = None) -> Index:
        """Index `data`: numpy rows, an embeddings file, or sentences in `lang` embedded with
        `model`, else the model their language picks; `factory` is a FAISS factory string
        (Flat: exact), `metric` cosine (rows normalised), ip or l2."""
        given = Side(data, lang, model, "the indexed rows")
        side, = side_rows([given])
        vectors = Vectors(side.rows, name=side.origin.source, normalize=metric == "cosine")
        index = build_index(vectors, factory, metric)
        meta = IndexMeta(dim=vectors.dim, metric=metric, count=index.ntotal, factory=factory,
                         model=side.origin.sha256, model_name=side.origin.model,
                         model_space=side.origin.space,
                         source=os.path.abspath(given.path) if given.path else None)
        return cls(index, meta)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Index:
        """The index saved at `path` (by `save` or `laser knn build`), with its INDEX.json."""
        index, meta = load_index(path)
        return cls(index, meta, os.fspath(path))

    def save(self, path: str | os.PathLike) -> None:
        """Write the index to `path` and its metadata to `path`.json, atomically."""
        save_index(self.index, self.meta, path)

    @property
    def origin(self) -> Origin:
        """The model, space and checkpoint of the indexed rows (unknown for plain rows)."""
        return self.meta.origin(self.name)

    def __len__(self) -> int:
        return self.index.ntotal

    def search(self, queries: Data, k: int = 10, lang: Optional[str] = None,
               model: Optional[str] = None,
               nprobe: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
        """The `k` nearest indexed rows of each query (numpy rows, an embeddings file, or
        sentences in `lang`, embedded with a model of this index's space): scores (float32,
        best first; cosine for cosine indexes) and ids (int64), both of shape
        (queries, min(k, len(index))). Queries of another embedding space are refused."""
        side, = side_rows([Side(queries, lang, model, "the queries")], against=self.origin)
        check_query_dim(self.name, self.meta, side.rows.shape[1])
        vectors = Vectors(side.rows, name=side.origin.source,
                          normalize=self.meta.metric == "cosine")
        found = search(self.index, vectors, k, nprobe)
        return found.sims, found.ids
