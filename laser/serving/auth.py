"""API keys: who may call the server, checked in constant time; and the warning for a server open
to the network without them."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
from dataclasses import dataclass
from typing import Iterable, Optional

from ..errors import LaserError

KEY_VARIABLE = "LASER_API_KEY"


def _digest(key: bytes) -> bytes:
    """Keys are compared as SHA-256 digests: equal lengths, so the comparison's time says
    nothing about a key's length either."""
    return hashlib.sha256(key).digest()


@dataclass(frozen=True)
class ApiKeys:
    """The keys a request may present as `Authorization: Bearer KEY`; none: every request may
    call."""

    digests: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, keys: Iterable[str]) -> "ApiKeys":
        return cls(tuple(_digest(key.encode("utf-8")) for key in keys))

    @property
    def required(self) -> bool:
        return bool(self.digests)

    def allow(self, authorization: Optional[bytes]) -> bool:
        """Whether an Authorization header holds one of the keys: compared with every key, each
        in constant time, whichever matches."""
        if not self.digests:
            return True
        scheme, _, token = (authorization or b"").partition(b" ")
        presented = _digest(token.strip())
        matched = False
        for digest in self.digests:
            matched |= hmac.compare_digest(presented, digest)
        return matched and scheme.lower() == b"bearer"


def load_keys(given: Iterable[str], key_file: Optional[str],
              environment: Optional[dict] = None) -> ApiKeys:
    """The keys of `--api-key` (repeatable), `--api-key-file` (one a line; blank lines and
    `#` comments skipped) and $LASER_API_KEY, all of them valid."""
    keys = list(given)
    if key_file is not None:
        keys += keys_in_file(key_file)
    variable = (os.environ if environment is None else environment).get(KEY_VARIABLE, "")
    if variable.strip():
        keys.append(variable.strip())
    for key in keys:
        check_key(key)
    return ApiKeys.of(keys)


def keys_in_file(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except (OSError, UnicodeDecodeError) as error:
        raise LaserError(f"--api-key-file {path}: {getattr(error, 'strerror', None) or error}") \
            from None
    keys = [line for line in lines if line and not line.startswith("#")]
    if not keys:
        raise LaserError(f"--api-key-file {path}: no key in it (one key a line)")
    return keys


def check_key(key: str) -> None:
    """A key a client can send in a header: visible ASCII, no spaces."""
    if not key:
        raise LaserError("an API key is empty; give a key of printable ASCII without spaces")
    if not all("!" <= char <= "~" for char in key):
        raise LaserError("an API key must be printable ASCII without spaces")


def open_to_network(host: str) -> bool:
    """Whether listening on `host` lets other machines connect (anything but loopback)."""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True  # a host name: it may resolve to any interface
