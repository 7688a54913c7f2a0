"""Mining and scoring from Python (`laser.mine`, `laser.score`), by the rules of `laser mine` and
`laser score`: each side numpy rows, an embeddings file, or sentences embedded with the model
their language picks (LASER3 Igbo against LASER2 English when both are downloaded) or the one
named for them; margins and retrievals as the commands compute them.

    >>> import laser
    >>> for score, i, j in laser.mine(igbo, english, "ig", "en"):
    ...     print(f"{score:.3f}\t{igbo[i]}\t{english[j]}")
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..search.sides import Data, Side, side_rows
from ..search.vectors import Vectors
from .corpus import Corpus
from .mine import MineOptions, mine as mine_corpora
from .scoring import score_bitext


class Pair(NamedTuple):
    """A mined pair: its score and the row of each side (sentence-transformers'
    `paraphrase_mining` gives [score, i, j] likewise)."""

    score: float
    src: int
    trg: int


def mine(src: Data, trg: Data, src_lang: Optional[str] = None, trg_lang: Optional[str] = None,
         *, k: int = 4, margin: str = "ratio", retrieval: str = "max", threshold: float = 0.0,
         src_model: Optional[str] = None, trg_model: Optional[str] = None) -> list[Pair]:
    """The pairs margin mining finds between `src` and `trg` (each sentences in its language,
    numpy rows or an embeddings file), best first, as `laser mine` finds them: `margin` (ratio,
    distance, absolute) over `k` neighbours, `retrieval` (max, intersect, fwd, bwd), pairs
    above `threshold` (of retrieval max) kept."""
    options = MineOptions("mine", k, margin, retrieval, threshold)
    return _mined(_vectors(src, trg, src_lang, trg_lang, src_model, trg_model), options)


def score(src: Data, trg: Data, src_lang: Optional[str] = None, trg_lang: Optional[str] = None,
          method: str = "margin", k: int = 4, src_model: Optional[str] = None,
          trg_model: Optional[str] = None, *, margin: str = "ratio") -> np.ndarray:
    """One float32 score per pair src[i] <-> trg[i], as `laser score` computes it: `method`
    margin (of kind `margin`), cosine or csls, over neighbourhoods of `k`."""
    x, y = _vectors(src, trg, src_lang, trg_lang, src_model, trg_model)
    return score_bitext(x, y, method, k, margin)


def mine_sentences(src: Sequence[str], trg: Sequence[str], src_lang: str, trg_lang: str,
                   options: MineOptions = MineOptions(), src_model: Optional[str] = None,
                   trg_model: Optional[str] = None) -> list[tuple[float, str, str]]:
    """Two lists of sentences mined with `options` (as `laser mine`'s), each pair as (score,
    source sentence, target sentence), best first."""
    pairs = _mined(_vectors(src, trg, src_lang, trg_lang, src_model, trg_model), options)
    return [(pair.score, src[pair.src], trg[pair.trg]) for pair in pairs]


score_sentences = score  # its name before `laser.score`


def _vectors(src: Data, trg: Data, src_lang: Optional[str], trg_lang: Optional[str],
             src_model: Optional[str], trg_model: Optional[str]) -> tuple[Vectors, Vectors]:
    sides = (Side(src, src_lang, src_model, _name(src_lang, "source")),
             Side(trg, trg_lang, trg_model, _name(trg_lang, "target")))
    return tuple(Vectors(side.rows, name=side.origin.source) for side in side_rows(sides))


def _mined(vectors: tuple[Vectors, Vectors], options: MineOptions) -> list[Pair]:
    x, y = vectors
    pairs = mine_corpora(_corpus(x), _corpus(y), x, y, options)
    return [Pair(*pair) for pair in zip(pairs.score.tolist(), pairs.src.tolist(),
                                        pairs.trg.tolist())]


def _name(lang: Optional[str], role: str) -> str:
    return f"the {lang} sentences" if lang else f"the {role} side"


def _corpus(vectors: Vectors) -> Corpus:
    every = np.arange(len(vectors))
    return Corpus(vectors.name, every, every, every)
