"""WARC and WET files read with `warcio`: a document a record that holds text (a WET
`conversion` record, a text `resource`, an HTML or text `response`), named by its
`WARC-Target-URI` (else its `WARC-Record-ID`). A damaged record is one line naming the file and
the record."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import BinaryIO, Iterator, Optional

from ..errors import LaserError
from .sources import display_name, error_reason, open_decompressed, stream_errors

# Records that hold a document's text; the others (warcinfo, request, metadata, revisit) describe
# the crawl.
TEXT_RECORDS = ("conversion", "resource", "response")
# A document of a WARC file: its name, its paragraphs (lines) and its URL (None: none).
Record = tuple[str, list[str], Optional[str]]
_CHARSET = re.compile(r"charset=[\"']?([\w.:-]+)", re.IGNORECASE)


def warc_records(path: str) -> Iterator[Record]:
    """The text records of a WARC file, decompressed first (warcio would take a truncated
    stream for its end)."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed
    name = display_name(path)
    with open_decompressed(path) as (stream, kind):
        records = ArchiveIterator(GuardedStream(stream, stream_errors(kind)))
        number, last_id = 0, None
        try:
            for number, record in enumerate(records, 1):
                last_id = record.rec_headers.get_header("WARC-Record-ID")
                document = _document(record, _where(name, number, last_id))
                if document is not None:
                    yield document
        except ArchiveLoadFailed as error:
            raise _damaged(name, number + 1, last_id, str(error).strip()) from None
        except StreamDamaged as error:
            what = f"corrupt or truncated {kind} stream" if kind else "cannot read"
            raise _damaged(name, number + 1, last_id, f"{what} ({error})") from None


def _where(name: str, number: int, record_id: Optional[str]) -> str:
    return f"{name}: WARC record {number}" + (f" {record_id}" if record_id else "")


def _damaged(name: str, number: int, previous_id: Optional[str], reason: str) -> LaserError:
    after = f" (after {previous_id})" if previous_id else ""
    return LaserError(f"{name}: WARC record {number}{after}: damaged ({reason})")


def _document(record, where: str) -> Optional[Record]:
    """The document of a record, None for records that hold no text; a record shorter than its
    Content-Length, or without one, is damaged."""
    declared = record.rec_headers.get_header("Content-Length")
    if declared is None or not declared.strip().isdigit():
        raise LaserError(f"{where}: damaged (no valid Content-Length)")
    if record.rec_type not in TEXT_RECORDS:
        return None
    content_type = _content_type(record)
    if not content_type.startswith(("text/", "application/xhtml")):
        return None
    payload = record.content_stream().read()
    if record.rec_type != "response" and len(payload) < int(declared):
        raise LaserError(f"{where}: damaged (truncated: {len(payload)} of {declared} bytes)")
    text = payload.decode(_charset(content_type), errors="replace")
    if "html" in content_type:
        text = html_text(text)
    uri = record.rec_headers.get_header("WARC-Target-URI")
    record_id = record.rec_headers.get_header("WARC-Record-ID") or ""
    return uri or record_id, text.splitlines(), uri


def _content_type(record) -> str:
    """The type of a record's text: its HTTP Content-Type for a response, else its WARC one
    (a WET conversion record's is text/plain)."""
    headers = record.http_headers if record.rec_type == "response" else None
    value = (headers.get_header("Content-Type") if headers else
             record.rec_headers.get_header("Content-Type"))
    return (value or "text/plain").strip().lower()


def _charset(content_type: str) -> str:
    import codecs
    found = _CHARSET.search(content_type)
    if found:
        try:
            return codecs.lookup(found.group(1)).name
        except LookupError:
            pass
    return "utf-8"


# Elements whose text is not a page's text, and elements that end a paragraph.
_HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "svg"})
_BLOCKS = frozenset({"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6",
                     "tr", "td", "th", "table", "section", "article", "header", "footer",
                     "blockquote", "pre", "title", "dd", "dt", "nav", "aside", "main", "form",
                     "hr", "figcaption"})


class _TextParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def html_text(html: str) -> str:
    """The visible text of an HTML page, a paragraph a line (block elements end one)."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


class StreamDamaged(Exception):
    """A decompressed stream failed (corrupt or truncated): raised past readers (warcio) that
    would take an EOFError or OSError for the end of the file."""


class GuardedStream:
    """A stream whose read errors are `StreamDamaged`."""

    def __init__(self, stream: BinaryIO, errors: tuple[type, ...]):
        self.stream, self.errors = stream, errors

    def read(self, size: int = -1) -> bytes:
        try:
            return self.stream.read(size)
        except self.errors as error:
            raise StreamDamaged(error_reason(error)) from None

    def readline(self, size: int = -1) -> bytes:
        try:
            return self.stream.readline(size)
        except self.errors as error:
            raise StreamDamaged(error_reason(error)) from None
