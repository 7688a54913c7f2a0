"""A work directory held by the one run that uses it: an exclusive `flock` on a file in it,
which the kernel frees when the process ends however it ends (a killed run never blocks the
next); a second run is refused in one line naming the process that holds it. While a run holds
its work directory, the temp files of the runs before it there are stale, and removed."""
from __future__ import annotations

import fcntl
import os
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import LaserError

LOCK_FILE = ".laser.lock"
_HELD: set[str] = set()  # the work directories this process holds


@contextmanager
def hold_work_dir(directory: str | os.PathLike) -> Iterator[Path]:
    """Hold `directory` (created if missing) for the block, or refuse it in one line when
    another process holds it. One the block created and left empty is removed after it (a run
    refused for its options leaves no folder behind)."""
    directory = Path(directory)
    created = not directory.exists()
    create_work_dir(directory)
    fd = _locked(directory)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\t{_command()}\n".encode("utf-8", "replace"), 0)
    _HELD.add(os.path.realpath(directory))
    try:
        yield directory
    finally:
        _HELD.discard(os.path.realpath(directory))
        if created:
            _remove_if_unused(directory)
        os.close(fd)


def _remove_if_unused(directory: Path) -> None:
    """Remove a work directory that holds nothing but its lock (still held)."""
    try:
        if [entry.name for entry in os.scandir(directory)] == [LOCK_FILE]:
            os.unlink(directory / LOCK_FILE)
            directory.rmdir()
    except OSError:  # removed already (a run that cleans up), or filled by another run
        pass


def create_work_dir(directory: Path) -> None:
    """Make a work directory (and its parents) if missing, or say in one line why not."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LaserError(f"{directory}: cannot create the work directory "
                         f"({(error.strerror or str(error)).lower()})") from None


def holds(directory: str | os.PathLike) -> bool:
    """Whether this process holds the work directory `directory`."""
    return os.path.realpath(directory) in _HELD


def _locked(directory: Path) -> int:
    """A descriptor of the directory's lock file, locked; retried when the file was removed
    (by a run that finished and removed its work directory) between its open and its lock."""
    path = directory / LOCK_FILE
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise LaserError(f"{directory}: cannot lock the work directory "
                             f"({(error.strerror or str(error)).lower()})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise LaserError(f"{directory}: work directory in use by {holder}; wait for it to "
                             "end, or give another --work-dir") from None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _holder(fd: int) -> str:
    """`process PID (COMMAND)` as the holder wrote it, or `another process` before it has."""
    pid, _, command = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip().partition("\t")
    if not pid:
        return "another process"
    return f"process {pid}" + (f" ({command})" if command else "")


def _command() -> str:
    """This process's command line, shortened to one readable line."""
    words = [os.path.basename(sys.argv[0]) if sys.argv else "python", *sys.argv[1:]]
    line = " ".join(shlex.quote(word) for word in words).replace("\n", " ")
    return line if len(line) <= 200 else line[:197] + "..."
