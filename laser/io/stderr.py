"""Standard error at the file-descriptor level, where C and C++ libraries (fastBPE, FAISS) write
past Python's `sys.stderr`."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import IO, Iterator


@contextmanager
def stderr_redirected(target: IO) -> Iterator[None]:
    """File descriptor 2 pointed at `target` for the block, then restored."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        os.dup2(target.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
