"""laser: faithful, fast LASER sentence embeddings, similarity search and bitext mining.

The package is laid out by stage: `text` (normalisation, tokenisation), `subwords` (BPE),
`models` (which model: files, registry, resolution, downloads, checkpoint reading, embedding
spaces), `runtime` (how vectors are computed: BiLSTM, transformer, ONNX graphs and runtime,
quantisation, batching), `encoder` (the `Encoder` facade over both), `io` (sentence and
embedding files), `pipeline` (whole files), `search` (k-NN and FAISS indexes), `mining`, `eval`,
`training`, `apps` (classification, documents, graphs, dedup, paraphrases, pair filter; also as
`laser.classify`, `laser.documents`, ...), `distributed` (Ray), `serving` (`laser serve`) and
`cli`. `laser.Encoder`, `laser.mine`, `laser.score`, `laser.Index`, `laser.identify`,
`laser.align` (the `align` stage's package, callable) and `laser.split_sentences` are the
library's verbs (docs/python-api.md).
"""
import importlib
import importlib.util
import sys

from .errors import LaserError
from .version import __version__

# The applications' APIs by short name (`laser.classify.Classifier`, ...), imported on first use.
APPLICATIONS = ("classify", "documents", "graph", "dedup", "paraphrase", "pair_filter")
# The library's verbs (docs/python-api.md) by the module defining each, imported on first use:
# they pull in torch or FAISS, which `laser --help` should not wait for.
VERBS = {"Encoder": "encoder", "Index": "search.sentence_index", "mine": "mining.sentences",
         "score": "mining.sentences", "identify": "lid.files",
         "split_sentences": "text.sentences"}

__all__ = ["Encoder", "Index", "LaserError", "__version__", "align", "identify", "mine", "score",
           "split_sentences", *APPLICATIONS]


class _ApplicationNames:
    """Makes `import laser.classify` and `from laser.classify import Classifier` give the module
    `laser.apps.classify` itself (the same object, under both names), for every application.
    A meta path finder and loader by their methods, without importlib.abc's base classes,
    whose import (importlib.resources, tempfile...) costs every command 15 to 20 ms."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in APPLICATIONS:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(f"{__name__}.apps.{spec.name.rpartition('.')[2]}")
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = module.__spec__.loader_state  # it ran already: keep its own spec


if not any(isinstance(finder, _ApplicationNames) for finder in sys.meta_path):
    sys.meta_path.append(_ApplicationNames())


def __getattr__(name: str):
    if name in VERBS:
        return getattr(importlib.import_module(f".{VERBS[name]}", __name__), name)
    if name in APPLICATIONS:
        return importlib.import_module(f".apps.{name}", __name__)
    if name == "align":  # the package of the stage, callable as the verb
        return importlib.import_module(".align", __name__)
    raise AttributeError(f"module 'laser' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names only."""
    return sorted(__all__)
