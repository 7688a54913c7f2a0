"""The `laser` command line: a thin layer over the library, one module per command, each
imported when its command runs (`common.COMMAND_MODULES`)."""
from .common import main

__all__ = ["main"]
