"""laser: faithful, fast LASER sentence embeddings, similarity search and bitext mining."""
from .errors import LaserError
from .version import __version__

__all__ = ["Encoder", "LaserError", "__version__"]


def __getattr__(name: str):
    # Encoder pulls in torch; import it on first use so `laser --help` stays fast.
    if name == "Encoder":
        from .models.encoder import Encoder
        return Encoder
    raise AttributeError(f"module 'laser' has no attribute {name!r}")
