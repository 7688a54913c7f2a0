"""Documents as inputs: WARC and WET files (one record a document, its URL kept), JSON lines with
a text field, plain text with documents separated by blank lines, or plain text of one document a
line; each told by its content (a WARC file by its `WARC/1.x` version line, JSON lines by a first
line that parses as an object) and compressed or not as any input. A document's lines are its
paragraphs (`laser.cleaning.sentences` splits them into sentences)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Iterator, Optional

from ..errors import LaserError, located
from .bad_lines import BadLines
from .sources import (STDIN, display_name, error_reason, expand, numbered_file_lines,
                      open_decompressed, stream_errors)

AUTO = "auto"
LINES, PARAGRAPHS, JSONL, WARC = "lines", "paragraphs", "jsonl", "warc"
FORMATS = (AUTO, LINES, PARAGRAPHS, JSONL, WARC)
# Bytes of a first line read to tell JSON lines from text.
HEAD_LINE_BYTES = 1 << 24


@dataclass(frozen=True)
class DocumentOptions:
    """How an input is read as documents: its `format` (`auto`: told by its content, plain text
    being one document a line), the JSON field holding a record's text, whether paragraphs
    are split into sentences in `lang` (`split`; lang `auto`: each paragraph's language
    identified), and what becomes of a line of a text or JSON-lines file that is not UTF-8
    text (`bad_lines`: fail, skip or replace, `laser.io.bad_lines`; a WARC record is decoded by
    its charset, a bad byte replaced)."""

    format: str = AUTO
    text_field: str = "text"
    split: bool = False
    lang: Optional[str] = None
    bad_lines: str = "fail"

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise LaserError(f"unknown input format {self.format!r}; choose one of "
                             f"{', '.join(FORMATS)}")

    def in_language(self, lang: Optional[str], option: str = "--lang") -> "DocumentOptions":
        """These options for text in `lang` (which splitting sentences needs)."""
        if self.split and not lang:
            raise LaserError(f"--split-sentences needs the language of the text ({option})")
        return replace(self, lang=lang)


@dataclass(frozen=True)
class Document:
    """One document of a file: its name (URL, WARC record id, JSON `url` or `id` field, else its
    1-based number in the file: `numbered`), its URL when it has one, and its paragraphs
    (lines)."""

    file: str
    name: str
    paragraphs: list[str]
    url: Optional[str] = None
    numbered: bool = False


def input_format(path: str, options: DocumentOptions = DocumentOptions()) -> str:
    """The format of one file: `options.format`, else told by its first line (stdin, pipes and
    FIFOs, which cannot be read twice: one document a line)."""
    if options.format != AUTO:
        return options.format
    if path == STDIN or not os.path.isfile(path):
        return LINES
    with open_decompressed(path) as (stream, kind):
        try:
            head = stream.readline(HEAD_LINE_BYTES)
        except stream_errors(kind) as error:
            raise LaserError(f"{path}: corrupt or truncated {kind} stream "
                             f"({error_reason(error)})") from None
    return _format_of(head)


def _format_of(head: bytes) -> str:
    if head.startswith((b"WARC/1.", b"WARC/0.")):
        return WARC
    if head.lstrip().startswith(b"{"):
        try:
            if isinstance(json.loads(head), dict):
                return JSONL
        except ValueError:
            pass
    return LINES


def is_document_input(spec: str, options: DocumentOptions = DocumentOptions()) -> bool:
    """Whether any file of an input is read otherwise than as one sentence a line."""
    return options.split or any(input_format(path, options) != LINES for path in expand(spec))


def file_documents(path: str, options: DocumentOptions = DocumentOptions(),
                   bad: Optional[BadLines] = None) -> Iterator[Document]:
    """The documents of one file, in order; its lines that are not UTF-8 text are failed,
    skipped or replaced as `bad` says, and counted in it (default: as `options.bad_lines`
    says). A document named by its line keeps the line's number in the file."""
    kind = input_format(path, options)
    if kind == WARC:
        from .warc import warc_records  # warcio, only for WARC files
        return (Document(path, name, paragraphs, url)
                for name, paragraphs, url in warc_records(path))
    lines = numbered_file_lines(path, bad or BadLines(options.bad_lines))
    if kind == JSONL:
        return _jsonl_documents(path, lines, options.text_field)
    if kind == PARAGRAPHS:
        return _paragraph_documents(path, lines)
    return (Document(path, str(number), [line], numbered=True) for number, line in lines)


def read_documents(spec: str, options: DocumentOptions = DocumentOptions(),
                   bad: Optional[BadLines] = None) -> Iterator[Document]:
    """The documents of an input (a file, directory, glob or @LIST), file after file (its
    lines that are not UTF-8 text as `file_documents` reads them)."""
    for path in expand(spec):
        yield from file_documents(path, options, bad)


def _jsonl_documents(path: str, lines: Iterator[tuple[int, str]],
                     field: str) -> Iterator[Document]:
    """A document a JSON object of a file's (numbered) lines, its text in `field` (blank lines
    skipped)."""
    name = display_name(path)
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise located(name, number, f"not a JSON object ({error_reason(error)})") from None
        if not isinstance(record, dict):
            raise located(name, number, f"a JSON {_json_type(record)}, not an object")
        text = record.get(field)
        if text is None:
            raise located(name, number, f"no {field!r} field (--text-field)")
        if not isinstance(text, str):
            raise located(name, number, f"its {field!r} field (--text-field) is a JSON "
                                        f"{_json_type(text)}, not a string")
        url = record.get("url") if isinstance(record.get("url"), str) else None
        identifier = url or record.get("id")
        yield Document(path, str(identifier if identifier is not None else number),
                       text.splitlines(), url, numbered=identifier is None)


def _json_type(value) -> str:
    kinds = ((bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "array"),
             (dict, "object"), (type(None), "null"))
    return next(kind for types, kind in kinds if isinstance(value, types))


def _paragraph_documents(path: str, lines: Iterator[tuple[int, str]]) -> Iterator[Document]:
    """Documents of a file's (numbered) lines separated by blank lines; each of their lines a
    paragraph."""
    paragraphs: list[str] = []
    count = 0
    for _, line in lines:
        if line.strip():
            paragraphs.append(line)
        elif paragraphs:
            count += 1
            yield Document(path, str(count), paragraphs, numbered=True)
            paragraphs = []
    if paragraphs:
        yield Document(path, str(count + 1), paragraphs, numbered=True)
