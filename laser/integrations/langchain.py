"""LangChain's `Embeddings` over laser, in process and without torch (the `langchain` extra:
langchain-core only). A drop-in for langchain_community's `LaserEmbeddings`, which needs the
`laser_encoders` package, torch and fairseq: the same `lang` argument picks the same model (the
language's LASER3 encoder where one exists, else LASER2; LASER2 without `lang`), downloaded on
first use into $LASER_HOME, and the rows are those of `laser.laser_encoders` (docs/models.md).

    from laser.integrations.langchain import LaserEmbeddings
    embeddings = LaserEmbeddings(lang="eng_Latn")           # as langchain_community's
    embeddings = LaserEmbeddings(model="default")           # laser's shipped model, no download
    embeddings.embed_documents(["Hello world."]); embeddings.embed_query("Hi!")
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from ..errors import LaserError
from ..laser_encoders import LaserEncoderPipeline
from ..search.vectors import unit_rows

__all__ = ["LaserEmbeddings"]

Rows = Callable[[Sequence[str]], np.ndarray]


class LaserEmbeddings(Embeddings):
    """LASER sentence embeddings for LangChain. `lang` as langchain_community's `LaserEmbeddings`
    takes it (a FLORES-200 code such as `eng_Latn`, an ISO 639 code or an English name; None:
    the multilingual LASER2). Or `model`: a model directory or name as `laser embed --model`
    takes it (`default` is the shipped model), its sentences read as `lang` (English when None).
    `normalize=True` gives unit rows; `options` go to `laser.Encoder` (`max_tokens`,
    `quantize`, ...)."""

    def __init__(self, lang: Optional[str] = None, *, model: Optional[str] = None,
                 model_dir: Optional[str] = None, normalize: bool = False, **options):
        self.lang = lang
        self.normalize = normalize
        self._rows = official_rows(lang, model_dir, options) if model is None else \
            model_rows(model, lang, model_dir, options)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One row per text."""
        if not texts:
            return []
        rows = self._rows(list(texts))
        return (unit_rows(rows) if self.normalize else rows).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def official_rows(lang: Optional[str], model_dir: Optional[str], options: dict) -> Rows:
    """The rows of `laser_encoders`' pipeline for `lang` (LASER2 without one)."""
    pipeline = LaserEncoderPipeline(lang=lang, model_dir=model_dir,
                                    laser=None if lang else "laser2", **options)
    return pipeline.encode_sentences


def model_rows(model: str, lang: Optional[str], model_dir: Optional[str],
               options: dict) -> Rows:
    """The rows of `Encoder.encode` with `model`, sentences read as `lang` (English)."""
    if model_dir is not None:
        raise LaserError("model_dir is the download cache of lang's model; with model=, pass "
                         "the model's own directory as model")
    from .. import Encoder
    encoder = Encoder.load(model, **options)
    return lambda texts: encoder.encode(texts, lang or "en")
