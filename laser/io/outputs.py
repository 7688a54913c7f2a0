"""Every output of one command checked together before any work: each one writable
(`check_output_path`), and no two of them the same file or stream (`-o - --lang-out -`, or two
names of one file through links or relative paths), which would interleave two outputs in one
file that no reader can load. /dev/null may take any number of them."""
from __future__ import annotations

import os
from typing import Mapping, Optional

from ..errors import LaserError
from .atomic import STDOUT, check_output_path, is_stream, replaced_file


def check_outputs(outputs: Mapping[str, Optional[str | os.PathLike]]) -> None:
    """Refuse, in one line naming both options, two outputs that would write the same file or
    stream; then check each one (`check_output_path`). `outputs`: option name -> path (None:
    not asked for)."""
    given = {option: path for option, path in outputs.items() if path is not None}
    seen: dict[tuple, str] = {}
    for option, path in given.items():
        identity = _identity(path)
        if identity == _identity(os.devnull):
            continue
        if identity in seen:
            other = seen[identity]
            kind = "stream" if is_stream(path) else "file"
            raise LaserError(f"{_named(other, given[other])} and {_named(option, path)} would "
                             f"write the same {kind}; give each output its own path")
        seen[identity] = option
    for path in given.values():
        check_output_path(path)


def _identity(path: str | os.PathLike) -> tuple:
    """What two outputs share when they write the same place: the device and inode of an
    existing file or stream (stdout's own for '-'), else the absolute path a rename writes."""
    try:
        status = os.fstat(1) if str(path) == STDOUT else os.stat(path)
    except OSError:
        return ("path", os.path.realpath(replaced_file(path)))
    return ("inode", status.st_dev, status.st_ino)


def _named(option: str, path: str | os.PathLike) -> str:
    return f"{option} {path}" + (" (standard output)" if str(path) == STDOUT else "")
