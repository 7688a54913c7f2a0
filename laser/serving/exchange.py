"""What every request's head gives the endpoints (its id, its key, its origin), what every answer
gets back (the id, CORS headers), and the access log that records both."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Optional, TextIO

import orjson
from starlette.types import Scope

from ..errors import LaserError

MAX_REQUEST_ID = 128
CORS_HEADERS = "Authorization, Content-Type, X-Request-Id"
LOG_FORMATS = ("text", "json")


@dataclass(frozen=True)
class RequestHead:
    """The headers of a request that every endpoint reads, found in one pass."""

    request_id: bytes
    authorization: Optional[bytes]
    origin: Optional[bytes]

    @classmethod
    def of(cls, scope: Scope) -> "RequestHead":
        request_id = authorization = origin = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value
            elif name == b"x-request-id":
                request_id = value
            elif name == b"origin":
                origin = value
        return cls(request_id if valid_request_id(request_id) else new_request_id(),
                   authorization, origin)


def valid_request_id(value: Optional[bytes]) -> bool:
    """A client's X-Request-Id is kept when it is 1-128 visible ASCII characters."""
    return value is not None and 0 < len(value) <= MAX_REQUEST_ID and \
        all(33 <= byte <= 126 for byte in value)


def new_request_id() -> bytes:
    return os.urandom(16).hex().encode("ascii")


@dataclass(frozen=True)
class Cors:
    """The origins whose pages may call the server from a browser (`--cors-origin`; `*`: any)."""

    origins: frozenset[bytes] = frozenset()

    @classmethod
    def of(cls, origins: tuple[str, ...]) -> "Cors":
        for origin in origins:
            if not origin.isascii() or not origin.isprintable() or " " in origin:
                raise LaserError(f"--cors-origin {origin!r}: an origin is scheme://host[:port] "
                                 "in ASCII (IDNA for other names), or *")
        return cls(frozenset(origin.rstrip("/").encode("ascii") for origin in origins))

    def allowed(self, origin: Optional[bytes]) -> Optional[bytes]:
        """The Access-Control-Allow-Origin of a request from `origin`, None if refused."""
        if origin is None or not self.origins:
            return None
        if b"*" in self.origins:
            return b"*"
        return origin if origin in self.origins else None

    def answer_headers(self, allowed: bytes) -> list[tuple[bytes, bytes]]:
        return [(b"access-control-allow-origin", allowed), (b"vary", b"Origin"),
                (b"access-control-expose-headers", b"X-Request-Id, Retry-After")]

    def preflight_headers(self, methods: tuple[str, ...]) -> dict[str, str]:
        """A preflight's answer, beside `answer_headers`."""
        return {"Access-Control-Allow-Methods": ", ".join(methods),
                "Access-Control-Allow-Headers": CORS_HEADERS, "Access-Control-Max-Age": "600"}


@dataclass(frozen=True)
class Exchange:
    """One request answered, as the access log records it."""

    scope: Scope
    head: RequestHead
    status: int
    seconds: float
    sentences: int


class AccessLog:
    """One line per request on stderr: text, or JSON lines (`--access-log-format json`)."""

    def __init__(self, form: str = "text", stream: Optional[TextIO] = None):
        self.form = form
        self.stream = stream or sys.stderr

    def write(self, exchange: Exchange) -> None:
        scope = exchange.scope
        client = scope.get("client") or ("-", 0)
        query = scope.get("query_string", b"").decode("latin-1")
        path = (scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1") + \
            (f"?{query}" if query else "")  # as sent: percent-encoded, never a line break
        fields = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "client": f"{client[0]}:{client[1]}", "method": scope["method"], "path": path,
                  "status": exchange.status, "ms": round(exchange.seconds * 1000, 1),
                  "sentences": exchange.sentences,
                  "request_id": exchange.head.request_id.decode("ascii")}
        if self.form == "json":
            line = orjson.dumps(fields).decode("utf-8")
        else:
            line = (f'{fields["time"]} {fields["client"]} "{fields["method"]} {path}" '
                    f'{fields["status"]} {fields["ms"]}ms sentences={fields["sentences"]} '
                    f'request_id={fields["request_id"]}')
        self.stream.write(line + "\n")
        self.stream.flush()
