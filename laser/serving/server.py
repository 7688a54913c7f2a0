"""Running the application on uvicorn: a bound socket, quiet logs, a clean exit on a signal."""
from __future__ import annotations

import signal
import socket
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..errors import LaserError
from .app import Service, create_app
from .auth import open_to_network


@dataclass(frozen=True)
class ServerOptions:
    """Where and how uvicorn listens."""

    host: str = "127.0.0.1"
    port: int = 8080  # 0: a free port, printed on stderr
    shutdown_timeout: int = 30  # seconds in-flight requests get after SIGTERM/SIGINT


def bound_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port, or a one-line error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise LaserError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.listen(2048)
    return sock


@contextmanager
def signals_end_quietly() -> Iterator[None]:
    """uvicorn re-raises SIGTERM/SIGINT once it has shut down gracefully; with these handlers in
    place that ends nothing, so a stopped server exits 0."""
    previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(service: Service, options: ServerOptions) -> None:
    """Serve until SIGTERM or SIGINT: then stop accepting, finish the requests in flight
    (up to shutdown_timeout seconds) and return."""
    import uvicorn
    if open_to_network(options.host) and not service.access.keys.required:
        print(f"laser: warning: listening on {options.host} without --api-key: anyone who can "
              "reach this machine can use the server", file=sys.stderr, flush=True)
    sock = bound_socket(options.host, options.port)
    host, port = sock.getsockname()[:2]
    logged = service.access.log is not None
    # loop and http "auto": uvloop and httptools when installed (the serve extra has them);
    # the access log is laser's own (it has the request ids), not uvicorn's
    config = uvicorn.Config(create_app(service), log_level="warning", access_log=False,
                            # X-Forwarded-For only changes the client address the access log shows
                            proxy_headers=logged,
                            limit_concurrency=service.limits.max_connections,
                            timeout_graceful_shutdown=options.shutdown_timeout)
    shown = f"[{host}]" if ":" in host else host
    print(f"laser: serving on http://{shown}:{port}", file=sys.stderr, flush=True)
    with signals_end_quietly():
        uvicorn.Server(config).run(sockets=[sock])
    print("laser: stopped", file=sys.stderr, flush=True)
