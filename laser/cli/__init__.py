"""The `laser` command line: a thin layer over the library, one module per command."""
from .common import main
from . import embed  # noqa: F401  (registers commands)
from . import evaluate, knn, mine, score, train  # noqa: F401
from . import dedup, filter, paraphrase  # noqa: F401
from . import models  # noqa: F401
from . import classify  # noqa: F401
from . import serve  # noqa: F401

__all__ = ["main"]
