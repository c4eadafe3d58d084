"""One JSON `POST` route over real loopback HTTP, in a background thread: the base of the small fakes.

A subclass names its `route` and answers a decoded body with `(status, json_body)` in `answer`;
every request body and `Authorization` header is recorded, and a client that gave up waiting (a
timeout test) does not fail the server.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackServer:
    """An HTTP server on a free loopback port, serving `handler` from a thread while in a `with` block."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        """Scheme, host and port of the running server."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class JsonEndpoint(LoopbackServer):
    """Start with `with Fake() as fake:`; `fake.origin` is `http://127.0.0.1:<port>`."""

    route = "/"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.seen_auth: list[str | None] = []
        super().__init__(_handler(self))

    def record(self, body: dict[str, Any], auth: str | None) -> None:
        """Keep a request (from the server's threads)."""
        with self._lock:
            self.requests.append(body)
            self.seen_auth.append(auth)

    def answer(self, body: dict[str, Any]) -> tuple[int, object]:
        """The status and JSON body for one request to `route`."""
        raise NotImplementedError


def _handler(fake: JsonEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            status: int
            body: object
            if self.path != fake.route:
                status, body = 404, {"error": {"message": f"no route {self.path}"}}
            else:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.record(request, self.headers.get("Authorization"))
                status, body = fake.answer(request)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
