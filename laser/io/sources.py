"""Text inputs as users have them: one file, a directory, a quoted glob or @LIST (a file of
paths, one a line), each file plain or compressed (gzip, xz, zstd, bzip2: told by its magic
bytes), read as one stream of lines in order across the files."""
from __future__ import annotations

import bz2
import glob
import gzip
import lzma
import os
import stat
import sys
from contextlib import contextmanager
from typing import BinaryIO, Callable, Iterable, Iterator, Optional, TypeVar

from ..errors import LaserError, located
from .bad_lines import BadLines

STDIN = "-"
T = TypeVar("T")
GLOB_CHARACTERS = frozenset("*?[")
# Magic bytes of each compression; bzip2's "BZh" is followed by the block size (1-9) and the
# magic of a first block or of the end of an empty stream, so that text beginning "BZh" is text.
MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
BZIP2_BLOCKS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
SUFFIXES = {".gz": "gzip", ".xz": "xz", ".zst": "zstd", ".bz2": "bzip2"}
HEAD_BYTES = 10
# What a corrupt or truncated stream raises as it is read (zstd's ZstdError is an Exception of
# its own, added when a .zst file is opened).
STREAM_ERRORS = (EOFError, OSError, lzma.LZMAError)
FAIL = BadLines()  # what a reader does with a bad line unless told otherwise


def expand(spec: str | os.PathLike) -> list[str]:
    """The files of one input, in order: `spec` itself (a file, '-' for stdin), the files under
    a directory (recursively, by path, hidden files and folders left out), the matches of a
    glob (by name) or the paths listed in @LIST (one a line, blank lines skipped; a relative
    path is relative to the list file's directory). An existing file named like a glob or
    @LIST is that file."""
    spec = os.fspath(spec)
    if spec == STDIN:
        return [STDIN]
    if os.path.isdir(spec):
        return _directory_files(spec)
    if os.path.lexists(spec):
        return [spec]
    if spec.startswith("@") and len(spec) > 1:
        return _listed_files(spec[1:])
    if GLOB_CHARACTERS & set(spec):
        matches = sorted(path for path in glob.glob(spec, recursive=True)
                         if not os.path.isdir(path))
        if not matches:
            raise LaserError(f"{spec}: no file matches")
        return matches
    return [spec]


def _directory_files(directory: str) -> list[str]:
    found = []
    for root, folders, files in os.walk(directory):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found += [os.path.join(root, name) for name in files if not name.startswith(".")]
    found.sort(key=lambda path: os.path.relpath(path, directory).split(os.sep))
    if not found:
        raise LaserError(f"{directory}: no files in this directory")
    return found


def _listed_files(list_path: str) -> list[str]:
    """The paths of a list file, relative ones joined to its directory (stdin's: as written)."""
    with _opened(list_path) as raw:
        paths = [path.rstrip("\r") for path in decode_lines(display_name(list_path), raw, 1)]
    paths = [path for path in paths if path.strip()]
    if not paths:
        raise LaserError(f"{list_path}: lists no files")
    folder = "" if list_path == STDIN else os.path.dirname(list_path)
    return [os.path.join(folder, path) for path in paths]


def absolute_spec(spec: str) -> str:
    """`spec` as it reads from any directory: its path (or @LIST's) made absolute (the paths in
    a list are relative to the list, wherever it is read from)."""
    if spec == STDIN or os.path.lexists(spec) or not spec.startswith("@"):
        return spec if spec == STDIN else os.path.abspath(spec)
    return "@" + os.path.abspath(spec[1:])


def check_input(spec: str) -> None:
    """Refuse a missing, unreadable or directory input file (any file of a directory, glob or
    @LIST), or a file named as compressed that is not, before any work: only files named as
    compressed are opened (for their magic bytes); pipes and FIFOs are fine (left unread)."""
    for path in expand(spec):
        _check_file(path)


def _check_file(path: str) -> None:
    if path == STDIN:
        return
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise LaserError(f"{path}: no such file") from None
    except PermissionError:
        raise LaserError(f"{path}: permission denied") from None
    if stat.S_ISDIR(mode):
        raise LaserError(f"{path}: is a directory, not a text file")
    if not os.access(path, os.R_OK):
        raise LaserError(f"{path}: permission denied")
    if stat.S_ISREG(mode) and _named_compression(path):
        with _opened(path) as raw:
            compression_of(path, _head(raw))


def display_name(path: str) -> str:
    return "<stdin>" if path == STDIN else path


@contextmanager
def _opened(path: str) -> Iterator[BinaryIO]:
    """The raw bytes of a file, or of stdin for '-'."""
    if path == STDIN:
        yield sys.stdin.buffer
        return
    try:
        with open(path, "rb") as f:
            yield f
    except FileNotFoundError:
        raise LaserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise LaserError(f"{path}: is a directory, not a text file") from None
    except PermissionError:
        raise LaserError(f"{path}: permission denied") from None


def _head(raw: BinaryIO) -> bytes:
    """The first bytes of a stream, left unread (buffered streams peek; files seek back)."""
    if raw.seekable():
        head = raw.read(HEAD_BYTES)
        raw.seek(0)
        return head
    return raw.peek(HEAD_BYTES)[:HEAD_BYTES] if hasattr(raw, "peek") else b""


def compression_of(path: str, head: bytes) -> Optional[str]:
    """The compression whose magic bytes start `head` (None: plain text); a file named .gz,
    .xz, .zst or .bz2 that has none is refused as corrupt."""
    found = next((kind for magic, kind in MAGIC if head.startswith(magic)), None)
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in BZIP2_BLOCKS:
        found = "bzip2"
    expected = _named_compression(path)
    if found is None and expected and head:
        raise LaserError(f"{path}: not a valid {expected} stream (corrupt, or misnamed)")
    return found


def _named_compression(path: str) -> Optional[str]:
    """The compression a file's suffix names (.gz, .xz, .zst, .bz2), or None."""
    return SUFFIXES.get(os.path.splitext(path)[1].lower())


@contextmanager
def _decompressing(path: str) -> Iterator[tuple[BinaryIO, Optional[str]]]:
    """The bytes of a file decompressed as its magic bytes say, and the compression (or None)."""
    with _opened(path) as raw:
        kind = compression_of(display_name(path), _head(raw))
        yield _decompressed(raw, kind), kind


def _decompressed(raw: BinaryIO, kind: Optional[str]) -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(raw)
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    if kind == "zstd":
        return zstd_module().ZstdFile(raw)
    return raw


def zstd_module():
    """zstd of the standard library (`compression.zstd`, Python 3.14 on), else its backport
    (the `backports.zstd` package, a dependency before 3.14)."""
    try:
        from compression import zstd
    except ImportError:
        from backports import zstd
    return zstd


def _stream_errors(kind: Optional[str]) -> tuple[type, ...]:
    return STREAM_ERRORS + (zstd_module().ZstdError,) if kind == "zstd" else STREAM_ERRORS


def file_lines(path: str, bad: BadLines = FAIL) -> Iterator[str]:
    """The lines of one file (or stdin for '-'), decompressed as its magic bytes say, without
    their '\\n'. Lines are split on '\\n' only (a final line without one is still a line); a
    truncated or corrupt stream and a failed read are errors naming the file and line, and so
    are NUL bytes and invalid UTF-8 unless `bad` skips or replaces them."""
    return (text for _, text in numbered_file_lines(path, bad))


def numbered_file_lines(path: str, bad: BadLines = FAIL) -> Iterator[tuple[int, str]]:
    """`file_lines` with the 1-based number of each line in the file: a line `bad` skips is
    left out, and its number with it."""
    def numbered(name: str, stream: BinaryIO) -> Iterator[tuple[tuple[int, str], int]]:
        for number, text in numbered_lines(name, stream, 1, bad):
            yield (number, text), number
    return _read_located(path, numbered)


def file_line_blocks(path: str, block_bytes: int = 1 << 20,
                     bad: BadLines = FAIL) -> Iterator[tuple[bytes, int]]:
    """The lines of one file (or stdin for '-') as `file_lines` reads and checks them, a block
    of whole lines at a time: their UTF-8 bytes separated by '\\n' (none after the last), and
    how many lines."""
    def blocks(name: str, stream: BinaryIO) -> Iterator[tuple[tuple[bytes, int], int]]:
        number, rest = 0, b""
        for block in iter(lambda: stream.read(block_bytes), b""):
            end = block.rfind(b"\n")
            if end < 0:
                rest += block
                continue
            lines, rest = rest + block[:end], block[end + 1:]
            checked = _checked_block(name, lines, number + 1, bad)
            number += lines.count(b"\n") + 1
            if checked[1]:
                yield checked, number
        if rest:
            checked = _checked_block(name, rest, number + 1, bad)
            if checked[1]:
                yield checked, number + 1
    return _read_located(path, blocks)


def _read_located(path: str, read: Callable[[str, BinaryIO], Iterator[tuple[T, int]]]
                  ) -> Iterator[T]:
    """The items `read` makes of a file's decompressed stream, each given with the count of
    lines read so far; a corrupt or truncated stream or a failed read is an error naming the
    file and the line after them."""
    name = display_name(path)
    with _decompressing(path) as (stream, kind):
        lines_read = 0
        try:
            for item, lines_read in read(name, stream):
                yield item
        except _stream_errors(kind) as error:
            what = f"corrupt or truncated {kind} stream" if kind else "cannot read"
            raise located(name, lines_read + 1, f"{what} ({_reason(error)})") from None


def _checked_block(name: str, lines: bytes, first_number: int,
                   bad: BadLines = FAIL) -> tuple[bytes, int]:
    """A block of lines and how many, once checked as `decode_lines` checks each line (the
    lines `bad` skips left out, those it replaces re-encoded)."""
    if b"\x00" in lines or not _is_utf8(lines):
        kept = list(decode_lines(name, lines.split(b"\n"), first_number, bad))
        return "\n".join(kept).encode("utf-8"), len(kept)
    return lines, lines.count(b"\n") + 1


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_line_blocks(spec: str, bad: BadLines = FAIL) -> Iterator[tuple[bytes, int]]:
    """`read_lines` a block of whole lines at a time (see `file_line_blocks`)."""
    for path in expand(spec):
        yield from file_line_blocks(path, bad=bad)


def _reason(error: BaseException) -> str:
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return text.rstrip(".").lower()


def decode_lines(name: str, raw_lines: Iterable[bytes], first_number: int,
                 bad: BadLines = FAIL) -> Iterator[str]:
    """Raw lines (numbered from `first_number`) as text without their '\\n'; NUL bytes and
    invalid UTF-8 are errors naming file and line, unless `bad` skips or replaces them."""
    return (text for _, text in numbered_lines(name, raw_lines, first_number, bad))


def numbered_lines(name: str, raw_lines: Iterable[bytes], first_number: int,
                   bad: BadLines = FAIL) -> Iterator[tuple[int, str]]:
    """`decode_lines` with the number of each line (a line `bad` skips left out)."""
    for number, raw in enumerate(raw_lines, first_number):
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if b"\x00" not in raw:
            try:
                yield number, raw.decode("utf-8")
                continue
            except UnicodeDecodeError:
                pass
        text = bad.decoded(name, number, raw)
        if text is not None:
            yield number, text


def read_lines(spec: str, bad: BadLines = FAIL) -> Iterator[str]:
    """Yield the lines of a UTF-8 input without their '\\n': a file (or stdin for '-'), or the
    files of a directory, a glob or @LIST in order (see `expand`), each plain or compressed.

    Lines are split on '\\n' only, as the official tools split them; a final line without a
    newline is still a line. Invalid UTF-8 and NUL bytes are errors naming file and line,
    unless `bad` skips or replaces them (`laser.io.bad_lines`).
    """
    for path in expand(spec):
        yield from file_lines(path, bad)


def located_lines(spec: str, bad: BadLines = FAIL) -> Iterator[tuple[str, int, str]]:
    """(file, 1-based line number in it among the lines kept, text) of every line of `spec`,
    in order."""
    for path in expand(spec):
        for number, text in enumerate(file_lines(path, bad), 1):
            yield path, number, text


@contextmanager
def _checked_stream(path: str) -> Iterator[BinaryIO]:
    """A file's decompressed bytes; a corrupt or truncated stream read from it is a LaserError
    naming the file."""
    with _decompressing(path) as (stream, kind):
        try:
            yield stream
        except _stream_errors(kind) as error:
            raise LaserError(f"{display_name(path)}: corrupt or truncated {kind} stream "
                             f"({_reason(error)})") from None


def file_blocks(path: str, block_bytes: int = 1 << 24) -> Iterator[bytes]:
    """The decompressed bytes of one file, a block at a time."""
    with _checked_stream(path) as stream:
        yield from iter(lambda: stream.read(block_bytes), b"")


def file_bytes(path: str, offset: int, size: int) -> bytes:
    """`size` decompressed bytes of a file from `offset` (a compressed one is decompressed from
    its start up to them)."""
    with _checked_stream(path) as stream:
        stream.seek(offset)
        return stream.read(size)


def count_file_lines(path: str) -> int:
    """The lines of one regular file as `file_lines` splits them, read in blocks."""
    count, last = 0, b"\n"
    for block in file_blocks(path):
        count += block.count(b"\n")
        last = block[-1:]
    return count + (last != b"\n")


def open_decompressed(path: str):
    """A context manager of a file's (or stdin's) bytes decompressed as its magic bytes say,
    and its compression (None: plain); see `stream_errors` for what a damaged stream raises."""
    return _decompressing(path)


def stream_errors(kind: Optional[str]) -> tuple[type, ...]:
    """What reading a damaged stream of compression `kind` raises."""
    return _stream_errors(kind)


def error_reason(error: BaseException) -> str:
    """An exception's message as a lower-case phrase for a one-line error."""
    return _reason(error)
