"""The one way outputs are written. A regular file (or a new path) gets a hidden temp file
beside it, renamed over it only when the work succeeded and removed on failure, Ctrl-C or
SIGTERM; a symlink's target is replaced that way (the link stays a link). Standard output
('-'), a character or block device and a FIFO are written through as streams, never replaced,
and get no sidecar; a write error (a full disk, /dev/full) is a one-line error."""
from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, TextIO

from ..errors import LaserError

STDOUT = "-"
TERMINATING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                            if hasattr(signal, name))
# Errors of the written file itself (not of the work that produces it): a one-line LaserError.
WRITE_ERRNOS = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO",
                                                           "EROFS", "ENXIO")
                         if hasattr(errno, name))


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM/SIGHUP so that pending temp files are removed."""

    def __init__(self, signum: int):
        super().__init__(128 + signum)
        self.signum = signum


def _raise_terminated(signum, frame) -> None:
    raise Terminated(signum)


def exit_cleanly_on_signals() -> None:
    """Turn SIGTERM/SIGHUP into an exception (where no one else handles them), so `finally`
    blocks run; only the main thread may install handlers."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATING_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _raise_terminated)


def is_stream(path: str | os.PathLike) -> bool:
    """Standard output ('-'), or an existing character/block device or FIFO (symlinks followed):
    written through in order, never replaced."""
    if str(path) == STDOUT:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)


def takes_sidecar(path: str | os.PathLike) -> bool:
    """Whether PATH.json may be written beside `path`: not for stdout, a device or a FIFO."""
    return not is_stream(path)


def replaced_file(path: str | os.PathLike) -> Path:
    """The file a rename replaces: `path`, or the file its symlink (chain) points at."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)


def check_output_path(path: str | os.PathLike) -> Path:
    """Refuse, before any work, an output whose directory is missing or cannot take a new file
    (tried for real: permission bits alone do not stop root, read-only mounts stop everyone);
    a stream must be writable."""
    if is_stream(path):
        if str(path) != STDOUT and not os.access(path, os.W_OK):
            raise LaserError(f"{path}: not writable")
        return Path(path)
    target = replaced_file(path)
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
    return Path(path)


@contextmanager
def write_errors(path: str | os.PathLike) -> Iterator[None]:
    """A failed write of the output itself (full disk, /dev/full) as one line naming it."""
    try:
        yield
    except OSError as error:
        if error.errno not in WRITE_ERRNOS:
            raise
        raise LaserError(f"{path}: cannot write ({(error.strerror or str(error)).lower()})") \
            from None


@contextmanager
def _open_stream(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """Standard output's bytes, or the device or FIFO opened for writing."""
    if str(path) == STDOUT:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with open(path, "wb") as stream:
        yield stream


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """A temp file name to write; when the block succeeds it becomes `path`: renamed over the
    file (or the symlink's target), or copied into a stream (binary formats may seek back, so a
    stream's bytes are staged in the system's temp directory first)."""
    check_output_path(path)
    exit_cleanly_on_signals()
    stream = is_stream(path)
    target = replaced_file(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=None if stream else target.parent)
    os.close(fd)
    try:
        with write_errors(path):
            yield tmp
            if stream:
                with open(tmp, "rb") as staged, _open_stream(path) as out:
                    shutil.copyfileobj(staged, out)
            else:
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_text_output(path: str | os.PathLike) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at `path` only when the block succeeds; stdout ('-'), a
    device or a FIFO is written through as the lines come."""
    if str(path) == STDOUT:
        yield sys.stdout
        sys.stdout.flush()
        return
    if is_stream(path):
        check_output_path(path)
        with write_errors(path), open(path, "w", encoding="utf-8", newline="\n") as f:
            yield f
        return
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
        yield f


def replace_atomically(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Create `path` by `write(temp_name)`: renamed into place, or copied into a stream."""
    with atomic_path(path) as tmp:
        write(tmp)
