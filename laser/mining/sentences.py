"""Mining and scoring two lists of sentences from Python, each side embedded with its own model:
the one its language picks, as `laser mine` and `laser embed` choose it (`choose_models`:
LASER3 Igbo against LASER2 English when both are downloaded), or the one named for it.

    >>> from laser.mining.sentences import mine_sentences
    >>> for score, ig, en in mine_sentences(igbo, english, "ig", "en"):
    ...     print(f"{score:.3f}\t{ig}\t{en}")
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..models.resolve import ModelRequest, choose_side_models
from ..search.vectors import Vectors
from .corpus import Corpus
from .mine import MineOptions, mine
from .scoring import score_bitext

if TYPE_CHECKING:
    from ..encoder import Encoder


def side_encoders(src_lang: str, trg_lang: str, src_model: Optional[str] = None,
                  trg_model: Optional[str] = None, **encoder_options) -> tuple[Encoder, Encoder]:
    """The encoders of the two sides (one, when both sides use one model); `src_model` and
    `trg_model` name a side's model (directory or name); models of two embedding spaces are
    refused (`choose_models`); a note on what to download comes as a warning."""
    from ..encoder import Encoder
    choices = choose_side_models(ModelRequest(src_model, src_lang, f"the {src_lang} sentences"),
                                 ModelRequest(trg_model, trg_lang, f"the {trg_lang} sentences"))
    for note in {choice.note for choice in choices if choice.note}:
        warnings.warn(note)
    src_files, trg_files = (choice.files for choice in choices)
    src_encoder = Encoder(src_files, **encoder_options)
    if trg_files == src_files:
        return src_encoder, src_encoder
    return src_encoder, Encoder(trg_files, **encoder_options)


def _embedded(src: Sequence[str], trg: Sequence[str], src_lang: str, trg_lang: str,
              src_model: Optional[str], trg_model: Optional[str]) -> tuple[Vectors, Vectors]:
    src_encoder, trg_encoder = side_encoders(src_lang, trg_lang, src_model, trg_model)
    return (Vectors(src_encoder.encode(list(src), src_lang), name=src_lang),
            Vectors(trg_encoder.encode(list(trg), trg_lang), name=trg_lang))


def _corpus(sentences: Sequence[str], name: str) -> Corpus:
    every = np.arange(len(sentences))
    return Corpus(name, every, every, every)


def mine_sentences(src: Sequence[str], trg: Sequence[str], src_lang: str, trg_lang: str,
                   options: MineOptions = MineOptions(), src_model: Optional[str] = None,
                   trg_model: Optional[str] = None) -> list[tuple[float, str, str]]:
    """(score, source sentence, target sentence) of the pairs margin mining finds, best first
    (`options`: as `laser mine`; its default keeps every pair of --retrieval max)."""
    x, y = _embedded(src, trg, src_lang, trg_lang, src_model, trg_model)
    pairs = mine(_corpus(src, src_lang), _corpus(trg, trg_lang), x, y, options)
    return [(score, src[i], trg[j])
            for i, j, score in zip(pairs.src.tolist(), pairs.trg.tolist(), pairs.score.tolist())]


def score_sentences(src: Sequence[str], trg: Sequence[str], src_lang: str, trg_lang: str,
                    method: str = "margin", k: int = 4, src_model: Optional[str] = None,
                    trg_model: Optional[str] = None) -> np.ndarray:
    """One score per sentence pair src[i] <-> trg[i] (as `laser score`: margin, cosine or csls)."""
    x, y = _embedded(src, trg, src_lang, trg_lang, src_model, trg_model)
    return score_bitext(x, y, method, k)
