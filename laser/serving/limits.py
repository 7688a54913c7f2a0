"""What one request may ask for, and the checks that turn bad input into a 4xx JSON error."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from ..text.languages import AUTO, UnknownLanguage, resolve as resolve_language


@dataclass(frozen=True)
class Limits:
    """The server's limits, each a `laser serve` option (docs/serving.md)."""

    max_body_bytes: int = 1_000_000  # a request body past this: 413
    max_inputs: int = 64  # sentences in one request (texts' max_client_batch_size is 32)
    max_chars: int = 4000  # characters of one sentence: 413, or cut with `truncate`
    max_queued: int = 2048  # sentences waiting or being embedded; past this: 429 + Retry-After
    max_connections: int = 512  # open connections and requests; past this uvicorn answers 503
    max_k: int = 100  # neighbours one /search query may ask for
    max_align_sentences: int = 1000  # sentences of each side of one /align request
    retry_after: int = 1  # seconds, the Retry-After of a 429 or 503


class RequestError(Exception):
    """A request the server refuses: its HTTP status, a one-line message, an error type."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error",
                 headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.headers = headers or {}


def decoded_body(body: bytes) -> Any:
    """A JSON request body as Python values: 400 when it is not UTF-8 or not JSON."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(400, f"the body is not valid UTF-8 (byte {error.start})") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise RequestError(400, f"the body is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise RequestError(422, f"the body must be a JSON object, not {json_type(value)}")
    return value


def query_parameters(raw: bytes) -> dict[str, str]:
    """The parameters of a URL query string: 400 when a value is not UTF-8 once unquoted."""
    try:
        return dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True, errors="strict"))
    except UnicodeDecodeError:
        raise RequestError(400, "the query string is not valid UTF-8 once unquoted") from None


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def body_sentences(body: dict, field: str, limits: Limits) -> list[str]:
    """The sentences a body's `field` must hold (`sentence_list`), cut to max_chars when the
    body asks to `truncate`."""
    if field not in body:
        raise RequestError(422, f"the body needs '{field}': a string or an array of strings")
    return sentence_list(body[field], field, limits, boolean(body, "truncate", False))


def sentence_list(value: Any, field: str, limits: Limits, truncate: bool = False) -> list[str]:
    """A field holding one sentence or a list of them, checked against `limits`."""
    sentences = [value] if isinstance(value, str) else value
    if not isinstance(sentences, list):
        raise RequestError(422, f"'{field}' must be a string or an array of strings, "
                                f"not {json_type(value)}")
    if not sentences:
        raise RequestError(422, f"'{field}' is an empty array; send at least one sentence")
    if len(sentences) > limits.max_inputs:
        raise RequestError(413, f"'{field}' holds {len(sentences)} sentences; the limit is "
                                f"{limits.max_inputs} per request (--max-inputs)")
    return [checked_sentence(text, f"{field}[{position}]", limits, truncate)
            for position, text in enumerate(sentences)]


def checked_sentence(text: Any, where: str, limits: Limits, truncate: bool = False,
                     how_to_truncate: str = '"truncate": true') -> str:
    """One sentence: a non-empty string of valid Unicode, on one line, within max_chars (or cut
    to it). Every endpoint refuses an empty string, as the OpenAI API does."""
    if not isinstance(text, str):
        raise RequestError(422, f"{where} must be a string, not {json_type(text)}")
    if not text:
        raise RequestError(422, f"{where} is an empty string; send at least one character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError(400, f"{where} holds an unpaired surrogate: not valid UTF-8") from None
    if "\n" in text or "\r" in text:
        raise RequestError(422, f"{where} contains a line break; send one sentence per item")
    if len(text) > limits.max_chars:
        if not truncate:
            raise RequestError(413, f"{where} has {len(text)} characters; the limit is "
                                    f"{limits.max_chars} (--max-chars); send {how_to_truncate} "
                                    "to cut it")
        text = text[:limits.max_chars]
    return text


def language(value: Any, default: str = "en") -> str:
    """A language code the preprocessing knows (ISO 639-1/3, FLORES-200 or English name), or
    `auto`: each sentence's language identified (laser.lid)."""
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip():
        raise RequestError(422, f"'lang' must be a language code such as 'en' or 'deu', not "
                                f"{value!r}")
    if value == AUTO:
        return value
    try:
        resolve_language(value)
    except UnknownLanguage as error:
        raise RequestError(422, str(error)) from None
    return value


def boolean(body: dict, field: str, default: bool) -> bool:
    """An optional boolean field."""
    value = body.get(field, default)
    if not isinstance(value, bool):
        raise RequestError(422, f"'{field}' must be true or false, not {json_type(value)}")
    return value


def query_boolean(params: dict[str, str], name: str) -> bool:
    """An optional true/false parameter of a query string (false when absent)."""
    value = params.get(name, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise RequestError(422, f"'{name}' must be true or false, not {params[name]!r}")
    return value in ("true", "1")


def integer(body: dict, field: str, default: int, low: int, high: int) -> int:
    """An optional integer field within [low, high]."""
    value = body.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(422, f"'{field}' must be an integer from {low} to {high}, "
                                f"not {value!r}")
    return value


def optional_name(body: dict, field: str) -> str | None:
    """An optional string field naming something (a model, an index)."""
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise RequestError(422, f"'{field}' must be a string, not {json_type(value)}")
    return value
