"""A Maven repository over real loopback HTTP, in a background thread: Maven Central's layout from a dict.

`FakeMaven().publish(group, artifact, version, {path: java})` builds a sources jar (zipfile) and
serves it at `<group path>/<artifact>/<version>/<artifact>-<version>-sources.jar`; anything else is
404. `credentials` (a header name and value) makes every request without them a 401. Every path
asked for and every header value seen is recorded.
"""

from __future__ import annotations

import contextlib
import io
import zipfile
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

from testkit.loopback import LoopbackServer


def sources_jar(files: Mapping[str, str | bytes]) -> bytes:
    """A sources jar (a zip) holding `files` (path → text or bytes) and a manifest."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for path, content in files.items():
            jar.writestr(path, content)
    return buffer.getvalue()


class FakeMaven(LoopbackServer):
    """Start with `with FakeMaven() as maven:`; `maven.url` is the repository's base URL."""

    def __init__(self, *, credentials: tuple[str, str] | None = None, prefix: str = "/maven2") -> None:
        self.files: dict[str, bytes] = {}
        self.requested: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self.credentials = credentials
        self.prefix = prefix
        super().__init__(_handler(self))

    @property
    def url(self) -> str:
        """The repository's base URL."""
        return f"{self.origin}{self.prefix}"

    def publish(self, group: str, artifact: str, version: str, files: Mapping[str, str | bytes]) -> bytes:
        """Serve a sources jar of `files` for one library version; returns its bytes."""
        data = sources_jar(files)
        self.put(f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}-sources.jar", data)
        return data

    def put(self, path: str, data: bytes) -> None:
        """Serve `data` at `path` (under the base URL)."""
        with self._lock:
            self.files[path] = data

    def asked(self, fragment: str) -> int:
        """How many requests named a path containing `fragment`."""
        with self._lock:
            return sum(1 for p in self.requested if fragment in p)

    def answer(self, path: str, headers: Mapping[str, str]) -> tuple[int, bytes]:
        """The status and body for one GET (from the server's threads)."""
        with self._lock:
            self.requested.append(path)
            self.headers_seen.append(dict(headers))
            if self.credentials is not None and headers.get(self.credentials[0]) != self.credentials[1]:
                return 401, b"unauthorized"
            found = self.files.get(path.removeprefix(self.prefix + "/"))
        return (200, found) if found is not None else (404, b"not found")


def _handler(fake: FakeMaven) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = fake.answer(self.path, dict(self.headers.items()))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
