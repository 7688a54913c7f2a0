"""laser: faithful, fast LASER sentence embeddings, similarity search and bitext mining.

The package is laid out by stage: `text` (normalisation, tokenisation), `subwords` (BPE),
`models` (checkpoints, encoders, the model registry and downloads), `io` (sentence and embedding
files), `pipeline` (whole files), `search` (k-NN and FAISS indexes), `mining`, `eval`,
`training` and `cli`.
"""
from .errors import LaserError
from .version import __version__

__all__ = ["Encoder", "LaserError", "__version__"]


def __getattr__(name: str):
    # Encoder pulls in torch; import it on first use so `laser --help` stays fast.
    if name == "Encoder":
        from .models.encoder import Encoder
        return Encoder
    raise AttributeError(f"module 'laser' has no attribute {name!r}")
