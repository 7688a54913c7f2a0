"""The `laser` command line: a thin layer over the library, one module per command."""
from .common import main
from . import embed  # noqa: F401  (registers commands)

__all__ = ["main"]
