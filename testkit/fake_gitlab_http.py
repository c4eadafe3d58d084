"""The fake GitLab's HTTP plumbing: a `ThreadingHTTPServer` that can drop its kept-alive connections on
shutdown, and the request handler that hands each request to `GitLabApi` (or the OAuth and CI job endpoints).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socket import SHUT_RDWR, socket
from typing import Any

from testkit.fake_gitlab_api import GitLabApi
from testkit.fake_gitlab_wire import Response, json_response

logger = logging.getLogger("testkit.fake_gitlab")  # the fake's one logger, as before the split


class GitLabServer(ThreadingHTTPServer):
    """Keeps track of open keep-alive connections so that shutting down does not hang on them."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, address: tuple[str, int], api: GitLabApi, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.api = api
        self._connections: set[socket] = set()
        self._connections_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that was killed (SIGKILL scenarios) reset its keep-alive connection
        super().handle_error(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Wake every handler blocked reading the next request on a kept-alive connection."""
        with self._connections_lock:
            open_now = list(self._connections)
        for conn in open_now:
            with contextlib.suppress(OSError):  # already closed by the client
                conn.shutdown(SHUT_RDWR)


class GitLabHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as GitLab; every response carries Content-Length
    server: GitLabServer

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/oauth/"):
            reply = self.server.api.gl.directory.oauth(method, self.path, body, self.headers.get("Authorization"))
            response = Response(reply.status, reply.body, reply.headers)
        else:
            response = self._respond(method, body)
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(response.body)
            with self.server.api.gl.lock:
                self.server.api.gl.bytes_sent += len(response.body)

    def _respond(self, method: str, body: bytes) -> Response:
        api = self.server.api
        if api.gl.latency_s > 0:
            time.sleep(api.gl.latency_s)  # the server's own thread: a slow instance, not a test pause
        job_token = self.headers.get("JOB-TOKEN")
        if job_token:
            path = self.path.partition("?")[0]
            api.gl.record_call(method, path)
            status, reply = api.gl.ci_jobs.answer(method, path, job_token, api.gl.url)
            return json_response(status, reply)
        try:
            return api.handle(method, self.path, request_token(self.headers.get("PRIVATE-TOKEN"), self.headers), body)
        except Exception as exc:  # the edge of a request: answer 500 and keep serving
            logger.exception("fake GitLab failed on %s %s", method, self.path)
            api.gl.server_errors.append(f"{method} {self.path}: {exc!r}")
            return api.internal_error()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test log would be full of access lines


def request_token(private_token: str | None, headers: Any) -> str | None:
    if private_token:
        return private_token
    authorization = str(headers.get("Authorization") or "")
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


class NoDelayGitLabHandler(GitLabHandler):
    disable_nagle_algorithm = True
