"""Sentence alignment of parallel documents (`laser align`, docs/alignment.md): monotone beads
of 1-1, 1-N, N-1, N-M sentences, insertions and deletions, found by a dynamic program over the
embeddings of runs of consecutive sentences, linear in the documents' length.

`laser.align(src, trg, src_lang=..., trg_lang=...)` is this module, callable: it aligns two lists
of sentences with the model the command would choose (`laser.align.models.align`)."""
import sys
import types

from .aligner import align_embeddings, align_sentences
from .beads import AlignOptions, Bead
from .models import align
from .overlaps import Overlaps, embed_overlaps

__all__ = ["AlignOptions", "Bead", "Overlaps", "align", "align_embeddings", "align_sentences",
           "embed_overlaps"]


class _CallableModule(types.ModuleType):
    """`laser.align(...)` is `laser.align.align(...)`: the verb and its package share a name."""

    def __call__(self, *args, **kwargs):
        return align(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
