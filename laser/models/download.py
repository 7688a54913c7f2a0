"""How does an official model get here? Downloaded resumably (HTTP Range on a .part file),
verified, then installed as every output is (`laser.io.atomic.install`: fsynced, renamed,
directory fsynced)."""
from __future__ import annotations

import re
import socket
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Collection, Optional

from tqdm import tqdm

from ..errors import LaserError
from ..io.atomic import install
from .files import sha256_of
from .registry import (DEFAULT, FileSpec, find_model, mirror_url, model_path, read_record,
                             write_record)
from ..version import __version__

BLOCK = 1 << 16
TIMEOUT = 60.0
RETRIES = 2
PART = ".part"


class Interrupted(Exception):
    """The connection ended before the whole file came; the .part file keeps what did."""


class NothingPastOffset(Exception):
    """HTTP 416: the server has no bytes past the requested offset; `total` is its file size."""

    def __init__(self, total: Optional[int]):
        super().__init__(total)
        self.total = total


@dataclass(frozen=True)
class Expected:
    size: Optional[int]
    sha256: Optional[str]


def download_model(name: str, base_url: Optional[str] = None, home: Optional[Path] = None,
                   progress: bool = True, timeout: float = TIMEOUT, retries: int = RETRIES,
                   only: Optional[Collection[str]] = None) -> Path:
    """Download (or complete, or re-verify) the manifest model `name`, or only its files named
    in `only`; return its directory. A download that fetched nothing leaves no directory."""
    if name == DEFAULT:
        raise LaserError("default: the shipped model needs no download")
    spec = find_model(name)
    directory = model_path(name, home)
    directory.mkdir(parents=True, exist_ok=True)
    try:
        record = read_record(directory)
        for file in spec.files:
            if only is not None and file.name not in only:
                continue
            expected = expected_of(file, record.get(file.name))
            url = mirror_url(file.url, base_url)
            size, digest = fetch(url, directory / file.name, expected, progress, timeout, retries)
            record[file.name] = {"url": url, "size": size, "sha256": digest}
            write_record(directory, name, record)
    except BaseException:
        _remove_if_empty(directory)
        raise
    return directory


def _remove_if_empty(directory: Path) -> None:
    """Remove `directory` when nothing was downloaded into it (a .part file to resume stays)."""
    try:
        directory.rmdir()
    except OSError:
        pass


def expected_of(file: FileSpec, recorded: Optional[dict]) -> Expected:
    """What a file must be: the manifest's size and sha256, else those of its first download."""
    recorded = recorded or {}
    return Expected(file.size if file.size is not None else recorded.get("size"),
                    file.sha256 or recorded.get("sha256"))


def fetch(url: str, target: Path, expected: Expected, progress: bool = True,
          timeout: float = TIMEOUT, retries: int = RETRIES) -> tuple[int, str]:
    """Make `target` the verified file at `url`; return its size and sha256."""
    if target.is_file():
        size, digest = target.stat().st_size, sha256_of(target)
        if _matches(expected, size, digest):
            return size, digest
        _warn(f"{target}: does not match its expected size or sha256; downloading it again")
        target.unlink()
    part = target.with_name(target.name + PART)
    for attempt in range(retries + 1):
        try:
            _transfer(url, part, expected.size, progress, timeout)
            break
        except Interrupted as error:
            if attempt == retries:
                raise LaserError(f"{url}: {error}; run the command again to resume") from None
            _warn(f"{url}: {error}; resuming")
    return _verify_and_install(url, part, target, expected)


def _transfer(url: str, part: Path, size: Optional[int], progress: bool, timeout: float) -> None:
    """Append the rest of `url` to `part`, restarting when the server cannot resume."""
    offset = part.stat().st_size if part.is_file() else 0
    if size is not None and offset > size:
        part.unlink()
        offset = 0
    if size is not None and offset == size:
        return
    try:
        response = _open(url, offset, timeout)
    except NothingPastOffset as error:
        if error.total == offset:  # the .part file was complete already
            return
        part.unlink()
        response = _open(url, 0, timeout)
    with response:
        start = _start_of(response, offset)
        length = response.headers.get("Content-Length")
        remaining = int(length) if length and length.isdigit() else None
        total = size if size is not None else (start + remaining if remaining is not None else None)
        with open(part, "r+b" if start else "wb") as out:
            out.seek(start)
            out.truncate()
            _copy(response, out, remaining, url, total, start, progress, timeout)


def _open(url: str, offset: int, timeout: float):
    """The response to a GET of `url` from byte `offset`; server errors become LaserError."""
    request = urllib.request.Request(url, headers={"User-Agent": f"laser-toolkit/{__version__}"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        return urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and offset:
            total = _range_total(error.headers.get("Content-Range", ""))
            error.close()
            raise NothingPastOffset(total) from None
        raise LaserError(f"{url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise LaserError(f"{url}: {_reason(error.reason, timeout)}") from None
    except (socket.timeout, TimeoutError):
        raise LaserError(f"{url}: no answer within {timeout:g} s (timed out)") from None
    except (OSError, ValueError) as error:
        raise LaserError(f"{url}: {error}") from None


def _range_total(content_range: str) -> Optional[int]:
    """N of a 'bytes */N' Content-Range header."""
    match = re.fullmatch(r"bytes \*/(\d+)", content_range.strip())
    return int(match.group(1)) if match else None


def _start_of(response, offset: int) -> int:
    """The byte where the response body starts: `offset` for 206, 0 when Range was ignored."""
    if response.status != 206:
        return 0
    match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    if not match or int(match.group(1)) != offset:
        raise LaserError(f"{response.url}: the server resumed at the wrong byte "
                         f"({response.headers.get('Content-Range')!r} for offset {offset})")
    return offset


def _copy(response, out: BinaryIO, remaining: Optional[int], url: str, total: Optional[int],
          start: int, progress: bool, timeout: float) -> None:
    """Stream the body into `out`; Interrupted when it ends short."""
    received = 0
    bar = tqdm(total=total, initial=start, unit="B", unit_scale=True, unit_divisor=1024,
               desc=url.rsplit("/", 1)[-1], file=sys.stderr, dynamic_ncols=True,
               disable=None if progress else True, leave=False)
    with bar:
        while True:
            try:
                block = response.read(BLOCK)
            except (socket.timeout, TimeoutError):
                raise Interrupted(f"no data for {timeout:g} s after {start + received} "
                                  "bytes") from None
            except (OSError, ValueError) as error:  # IncompleteRead, reset connections
                raise Interrupted(f"transfer interrupted after {start + received} bytes "
                                  f"({type(error).__name__})") from None
            if not block:
                break
            out.write(block)
            received += len(block)
            bar.update(len(block))
    if remaining is not None and received < remaining:
        raise Interrupted(f"transfer interrupted after {start + received} of "
                          f"{start + remaining} bytes")


def _verify_and_install(url: str, part: Path, target: Path, expected: Expected) -> tuple[int, str]:
    """Check the finished .part file against `expected`, then rename it into place."""
    size, digest = part.stat().st_size, sha256_of(part)
    problem = None
    if expected.size is not None and size != expected.size:
        problem = f"size mismatch (expected {expected.size} bytes, got {size})"
    elif expected.sha256 and digest != expected.sha256.lower():
        problem = f"sha256 mismatch (expected {expected.sha256}, got {digest})"
    if problem:
        part.unlink()
        raise LaserError(f"{url}: {problem}; the downloaded data was removed")
    install(part, target)
    return size, digest


def _matches(expected: Expected, size: int, digest: str) -> bool:
    return ((expected.size is None or size == expected.size)
            and (not expected.sha256 or digest == expected.sha256.lower()))


def _reason(reason, timeout: float) -> str:
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return f"no answer within {timeout:g} s (timed out)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return f"cannot resolve the host name ({reason.strerror})"
    return str(getattr(reason, "strerror", None) or reason)


def _warn(message: str) -> None:
    print(f"laser: warning: {message}", file=sys.stderr)
