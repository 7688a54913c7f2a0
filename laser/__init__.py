"""laser: faithful, fast LASER sentence embeddings, similarity search and bitext mining.

The package is laid out by stage: `text` (normalisation, tokenisation), `subwords` (BPE),
`models` (checkpoints, encoders, the model registry and downloads), `io` (sentence and embedding
files), `pipeline` (whole files), `search` (k-NN and FAISS indexes), `mining`, `eval`,
`training`, `apps` (classification, documents, graphs, dedup, paraphrases, pair
filter; also as `laser.classify`, `laser.documents`, ...) and `cli`.
"""
from .errors import LaserError
from .version import __version__

# The applications' APIs by short name (`laser.classify.Classifier`, ...), imported on first use.
APPLICATIONS = ("classify", "documents", "graph", "dedup", "paraphrase", "pair_filter")

__all__ = ["Encoder", "LaserError", "__version__", *APPLICATIONS]


def __getattr__(name: str):
    # Encoder and the applications pull in torch; import them on first use so `laser --help`
    # stays fast.
    if name == "Encoder":
        from .models.encoder import Encoder
        return Encoder
    if name in APPLICATIONS:
        import importlib
        return importlib.import_module(f".apps.{name}", __name__)
    raise AttributeError(f"module 'laser' has no attribute {name!r}")
