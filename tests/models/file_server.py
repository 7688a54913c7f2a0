"""A real HTTP server on 127.0.0.1 serving given files, for the download tests: it can also fail
with a status, cut bodies short, ignore Range requests or answer late."""
from __future__ import annotations

import re
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator


class FileServer(ThreadingHTTPServer):
    """Serves `files` (URL path -> body) with the failures above, as set on it."""

    daemon_threads = True

    def __init__(self, files: dict[str, bytes]):
        super().__init__(("127.0.0.1", 0), Handler)
        self.files = dict(files)
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.status = None
        self.cuts: list[int] = []  # cut the next responses' bodies after this many bytes
        self.ignore_range = False
        self.delay = 0.0
        self.url = f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address):
        pass  # a client that timed out and left is expected here


class Handler(BaseHTTPRequestHandler):
    server: FileServer

    def do_GET(self):
        server = self.server
        server.requests.append((self.path, self.headers.get("Range")))
        time.sleep(server.delay)
        if server.status:
            return self.send_error(server.status)
        if self.path not in server.files:
            return self.send_error(404)
        body, status, start = server.files[self.path], 200, 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match and not server.ignore_range:
            start = int(match.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                return self.end_headers()
            status = 206
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = server.cuts.pop(0) if server.cuts else None
        self.wfile.write(body[start:] if cut is None else body[start:start + cut])

    def log_message(self, *args):
        pass



@contextmanager
def serving(files: dict[str, bytes]) -> Iterator[FileServer]:
    """A FileServer of `files` running in a thread while the block runs."""
    httpd = FileServer(files)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
