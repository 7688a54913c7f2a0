"""The one way outputs are written. A regular file (or a new path) gets a hidden temp file
beside it, renamed over it only when the work succeeded and removed on failure, Ctrl-C or
SIGTERM; a symlink's target is replaced that way (the link stays a link). The rename is
durable, as SQLite commits: the temp file is fsynced before it, its directory after. Access is
never widened: a replaced file keeps its mode (and its group where the process may set it), a
new one gets 0666 less the umask as `open` gives it, and a file whose mode bits deny us writing
it is not replaced at all. Standard output ('-'), a character or block device and a FIFO are
written through as streams, never replaced, never fsynced, and get no sidecar; a write error (a
full disk, /dev/full) is a one-line error."""
from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Optional, TextIO

from ..errors import LaserError

STDOUT = "-"
TERMINATING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                            if hasattr(signal, name))
# Errors of the written file itself (not of the work that produces it): a one-line LaserError.
WRITE_ERRNOS = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO",
                                                           "EROFS", "ENXIO")
                         if hasattr(errno, name))
NEW_FILE_MODE = 0o666  # less the umask, as `open` creates files
PRIVATE_MODE = 0o600  # a temp file that will take a replaced file's mode
GROUP_BITS = 0o070
DIRECTORY_FLAG = getattr(os, "O_DIRECTORY", 0)


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
    check_replaceable(path)
    try:
        with tempfile.NamedTemporaryFile(prefix=f".{target.name}.", suffix=".probe",
                                         dir=directory):
            pass
    except OSError as error:
        raise LaserError(f"{path}: cannot write in {directory} "
                         f"({(error.strerror or str(error)).lower()})") from None
    return Path(path)


def check_replaceable(path: str | os.PathLike) -> None:
    """Refuse to replace an existing file whose mode bits deny us writing it (`read_only`)."""
    try:
        status = os.stat(path)
    except OSError:  # none, or out of reach: the probe of `check_output_path` says why
        return
    _refuse_read_only(path, status)


def _refuse_read_only(path: str | os.PathLike, status: os.stat_result) -> None:
    if stat.S_ISREG(status.st_mode) and read_only(status):
        raise LaserError(f"{path}: read-only (mode {stat.S_IMODE(status.st_mode):04o}), not "
                         "replaced; make it writable or write elsewhere")


def read_only(status: os.stat_result) -> bool:
    """Whether the write bit of our class is off: the owner's for the owner and for root (whom
    `open` never stops, so bits, not `os.access`, decide: a 0444 file stays), else the group's
    for a member of the file's group, else the others'."""
    uid = os.geteuid()
    if uid in (0, status.st_uid):
        bit = stat.S_IWUSR
    elif status.st_gid == os.getegid() or status.st_gid in os.getgroups():
        bit = stat.S_IWGRP
    else:
        bit = stat.S_IWOTH
    return not status.st_mode & bit


def new_temp_file(target: Path) -> str:
    """A new empty hidden file beside `target` to write it in: created as `open` would create
    `target` (0666 less the umask) when that is new, private (0600) when it replaces a file
    (`install` gives it that file's mode)."""
    mode = PRIVATE_MODE if os.path.lexists(target) else NEW_FILE_MODE
    while True:
        name = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
            return str(name)
        except FileExistsError:
            continue


TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")  # the names `new_temp_file` gives


def remove_temp_files(directory: str | os.PathLike,
                      targets: Callable[[str], bool] = lambda name: True) -> None:
    """Remove the temp files `new_temp_file` left in `directory` (not below it) when a run was
    killed before it could, for the targets `targets` accepts (by name). Only for a directory
    that no other process writes in: a held work directory (`laser.io.locks`)."""
    for entry in os.scandir(directory):
        match = TEMP_NAME.fullmatch(entry.name)
        if match and entry.is_file(follow_symlinks=False) and \
                targets(entry.name[1:].rsplit(".", 2)[0]):
            os.unlink(entry.path)


def install(temp: str | os.PathLike, target: Path,
            like: Optional[str | os.PathLike] = None) -> None:
    """Rename a finished temp file over `target` durably and without widening access: the
    replaced file's mode and group kept (a new one's taken from `like`, when given), the data
    fsynced before the rename, the directory (where the new name lives) after it."""
    _keep_access(temp, target, like)
    _fsync(temp, os.O_RDONLY)
    os.replace(temp, target)
    _fsync(target.parent, os.O_RDONLY | DIRECTORY_FLAG)


def _fsync(path: str | os.PathLike, flags: int) -> None:
    """Flush `path` (a file or a directory) to the disk; a directory on a file system that
    cannot sync one (EINVAL) is left as it is, as SQLite leaves it."""
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError as error:
        if not (flags & DIRECTORY_FLAG and error.errno == errno.EINVAL):
            raise
    finally:
        os.close(fd)


def _keep_access(temp: str | os.PathLike, target: Path,
                 like: Optional[str | os.PathLike] = None) -> None:
    """Give `temp` the mode and group (the owner too, for root) of the file it replaces, or
    where there is none, of `like` (if any); where the group cannot be kept, its bits are cut to
    what others may do."""
    try:
        status = os.stat(target)
    except FileNotFoundError:
        if like is None:
            return
        status = os.stat(like)
    else:
        _refuse_read_only(target, status)
    owner = status.st_uid if os.geteuid() == 0 else -1
    try:
        os.chown(temp, owner, status.st_gid)
    except PermissionError:
        pass
    mode = stat.S_IMODE(status.st_mode)
    if os.stat(temp).st_gid != status.st_gid:
        mode &= ~GROUP_BITS | ((mode & 0o007) << 3)
    os.chmod(temp, mode)


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
def atomic_path(path: str | os.PathLike,
                like: Optional[str | os.PathLike] = None) -> Iterator[str]:
    """A temp file name to write; when the block succeeds it becomes `path`: renamed over the
    file (or the symlink's target), or copied into a stream (binary formats may seek back, so a
    stream's bytes are staged in the system's temp directory first). A new file gets the mode
    and group of `like` when given (a sidecar: its output's)."""
    check_output_path(path)
    exit_cleanly_on_signals()
    stream = is_stream(path)
    target = replaced_file(path)
    if stream:  # staged in the system's temp directory, never renamed
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
    else:
        tmp = new_temp_file(target)
    try:
        with write_errors(path):
            yield tmp
            if stream:
                with open(tmp, "rb") as staged, _open_stream(path) as out:
                    shutil.copyfileobj(staged, out)
            else:
                install(tmp, target, like)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_text_output(path: str | os.PathLike,
                       like: Optional[str | os.PathLike] = None) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at `path` only when the block succeeds (new, with the mode
    and group of `like` when given); stdout ('-'), a device or a FIFO is written through as the
    lines come."""
    if str(path) == STDOUT:
        yield sys.stdout
        sys.stdout.flush()
        return
    if is_stream(path):
        check_output_path(path)
        with write_errors(path), open(path, "w", encoding="utf-8", newline="\n") as f:
            yield f
        return
    with atomic_path(path, like) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
        yield f


def replace_atomically(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Create `path` by `write(temp_name)`: renamed into place, or copied into a stream."""
    with atomic_path(path) as tmp:
        write(tmp)


def copy_atomically(source: str | os.PathLike, path: str | os.PathLike) -> None:
    """Make `path` a copy of the file `source`, written as every output is."""
    replace_atomically(path, lambda tmp: shutil.copyfile(source, tmp))
