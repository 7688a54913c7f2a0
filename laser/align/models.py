"""`laser.align`: two documents' sentences aligned with the model `laser align` would use
(the shipped default, --model, the official model of each language when downloaded, a model
per side; embedding spaces never mixed: `laser.models.resolve`)."""
from __future__ import annotations

from typing import Optional, Sequence

from ..models.options import ModelOptions
from .aligner import align_sentences
from .beads import AlignOptions, Bead
from .overlaps import Embed


SOURCES = ("the source document", "the target document")


def side_loaders(model: ModelOptions, langs: tuple[str, str],
                 own_models: tuple[Optional[str], Optional[str]] = (None, None),
                 sources: tuple[str, str] = SOURCES, notes: bool = True) -> list:
    """The encoder of each side (an `EncoderLoader`), its model chosen for both sides together
    and loaded on first use (one encoder when both sides share a model)."""
    from ..encoder import encoder_loaders
    from ..models.resolve import ModelRequest, choose_models
    requests = [ModelRequest(own, lang, source)
                for own, lang, source in zip(own_models, langs, sources)]
    return encoder_loaders(choose_models(model, requests), model, notes=notes)


def side_embedders(model: ModelOptions, langs: tuple[str, str],
                   own_models: tuple[Optional[str], Optional[str]] = (None, None),
                   sources: tuple[str, str] = SOURCES,
                   notes: bool = True) -> tuple[Embed, Embed]:
    """The embedding function of each side (`side_loaders`)."""
    loaders = side_loaders(model, langs, own_models, sources, notes)

    def embedder(loader, lang: str) -> Embed:
        return lambda sentences: loader().encode(sentences, lang)
    return embedder(loaders[0], langs[0]), embedder(loaders[1], langs[1])


def align(src_sentences: Sequence[str], trg_sentences: Sequence[str], src_lang: str = "auto",
          trg_lang: str = "auto", model: Optional[str] = None, src_model: Optional[str] = None,
          trg_model: Optional[str] = None, options: AlignOptions = AlignOptions(),
          running: ModelOptions = ModelOptions()) -> list[Bead]:
    """The beads aligning two documents' sentences (`laser.align.Bead`: 0-based indices of each
    side, cosine score). `src_lang`/`trg_lang`: each side's language, or `auto` (each sentence's
    identified); `model` both sides' model, `src_model`/`trg_model` one side's (directories or
    names, as `--model`); `running`: how the model runs (device, quantisation...)."""
    from dataclasses import replace
    chosen = replace(running, model=model) if model else running
    embed_src, embed_trg = side_embedders(chosen, (src_lang, trg_lang), (src_model, trg_model))
    return align_sentences(list(src_sentences), list(trg_sentences), embed_src, embed_trg, options)
