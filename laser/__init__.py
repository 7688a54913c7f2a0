"""laser: faithful, fast LASER sentence embeddings, similarity search and bitext mining."""
from .errors import LaserError
from .version import __version__

__all__ = ["LaserError", "__version__"]
