"""Binary outputs are never written to a terminal, as gzip refuses to: the bytes would garble it
and nobody could read them back."""
from __future__ import annotations

import os
import sys

from ..errors import LaserError
from .atomic import STDOUT


def check_binary_output(path: str | os.PathLike, what: str) -> None:
    """Refuse, before any work, to write `what` (a binary format) to standard output when it is
    a terminal; a pipe, a file or any other stream is fine."""
    if str(path) == STDOUT and sys.stdout.isatty():
        raise LaserError(f"standard output is a terminal, and {what} are binary: redirect them "
                         "(laser ... > FILE, or | another command) or give -o FILE")
