"""The one way outputs are written: a hidden temp file beside the target, renamed over it only
when the work succeeded, and removed on failure, Ctrl-C or SIGTERM."""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TextIO

from ..errors import LaserError

STDOUT = "-"
TERMINATING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                            if hasattr(signal, name))


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM/SIGHUP so that pending temp files are removed."""

    def __init__(self, signum: int):
        super().__init__(128 + signum)
        self.signum = signum


def _raise_terminated(signum, frame) -> None:
    raise Terminated(signum)


def _exit_cleanly_on_signals() -> None:
    """Turn SIGTERM/SIGHUP into an exception (where no one else handles them), so `finally`
    blocks run; only the main thread may install handlers."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATING_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _raise_terminated)


def check_output_path(path: str | os.PathLike) -> Path:
    """Refuse, before any work, an output whose directory is missing or cannot take a new file
    (tried for real: permission bits alone do not stop root, read-only mounts stop everyone);
    '-' (stdout) needs no check."""
    target = Path(path)
    if str(path) == STDOUT:
        return target
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise LaserError(f"{path}: is a directory; give an output file name")
    if not directory.is_dir():
        raise LaserError(f"{path}: output directory does not exist")
    try:
        with tempfile.NamedTemporaryFile(prefix=f".{target.name}.", suffix=".probe",
                                         dir=directory):
            pass
    except OSError as error:
        raise LaserError(f"{path}: cannot write in {directory} "
                         f"({(error.strerror or str(error)).lower()})") from None
    return target


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """A temp file name beside `path`, renamed to `path` when the block succeeds."""
    target = check_output_path(path)
    _exit_cleanly_on_signals()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_text_output(path: str) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at `path` only when the block succeeds ('-': stdout)."""
    if path == STDOUT:
        yield sys.stdout
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
        yield f


def replace_atomically(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Create `path` by `write(temp_name)`, renamed only on success."""
    with atomic_path(path) as tmp:
        write(tmp)
