"""A real HTTP embedding server for tests and benchmarks, speaking OpenAI's `POST /v1/embeddings`.

Vectors are deterministic: the words of a text (split on non-alphanumerics, and camelCase words also
into their parts) are hashed into `dim` signed buckets and L2-normalized, so texts that share
identifiers are close in cosine distance. `fake_vector` is that function, for reuse without HTTP.

    with FakeEmbeddingServer(dim=64, api_key="sk-test") as srv:
        settings = EmbeddingSettings(base_url=srv.base_url, api_key="sk-test")
        srv.fail_next(1, status=429, retry_after="2")
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

_WORD = re.compile(r"[A-Za-z0-9]+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")  # getHTTPClient2 -> get, HTTP, Client, 2


def fake_tokens(text: str) -> list[str]:
    """Lowercased words of `text` (split on non-alphanumerics), each followed by its camelCase parts."""
    found: list[str] = []
    for word in _WORD.findall(text):
        found.append(word.lower())
        parts = _PART.findall(word)
        if len(parts) > 1:
            found.extend(part.lower() for part in parts)
    return found


def fake_vector(text: str, dim: int = 64) -> list[float]:
    """A deterministic unit vector of `dim` floats for `text` (feature hashing of its tokens)."""
    values = [0.0] * dim
    for token in fake_tokens(text):
        n = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "big")
        values[n % dim] += -1.0 if n >> 63 else 1.0
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0.0:  # no tokens at all: still a unit vector, as cosine distance needs
        return [1.0] + [0.0] * (dim - 1)
    return [v / norm for v in values]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    """One request the fake server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def inputs(self) -> list[str]:
        """The texts asked for, whether `input` was a string or a list."""
        raw = self.body.get("input", [])
        return [raw] if isinstance(raw, str) else list(raw)


@dataclass(frozen=True, slots=True)
class _Failure:
    status: int
    retry_after: str | None


class FakeEmbeddingServer:
    """An OpenAI-compatible embeddings server on 127.0.0.1, run in a background thread.

    Args:
        dim: Vector size when the request does not ask for `dimensions`.
        api_key: When set, requests must carry it as a bearer token or an `api-key` header.
        model: When set, any other model is answered with 404 `model_not_found`.
        max_inputs: More inputs in one request are refused with 400, as OpenAI does past 2048.
        max_input_chars: When set, a longer input is refused with 400 and OpenAI's context-length message.
        honours_dimensions: Whether a request's `dimensions` sets the vector size (False: a model that
            cannot shorten its vectors and answers `dim` floats anyway, as servers that ignore it do).
        nodelay: Set TCP_NODELAY on each connection, as real servers do. The handler writes headers and
            body in two send() calls: with Nagle on, the body waits for the client's delayed ACK (about
            40 ms per request on loopback), which only matters to benchmarks.
    """

    def __init__(
        self,
        *,
        dim: int = 64,
        api_key: str | None = None,
        model: str | None = None,
        max_inputs: int = 2048,
        max_input_chars: int | None = None,
        honours_dimensions: bool = True,
        nodelay: bool = False,
    ) -> None:
        self.dim = dim
        self.api_key = api_key
        self.model = model
        self.max_inputs = max_inputs
        self.max_input_chars = max_input_chars
        self.honours_dimensions = honours_dimensions
        self.nodelay = nodelay
        self.requests: list[RecordedRequest] = []
        self._failures: deque[_Failure] = deque()
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`, the value for `EmbeddingSettings.base_url`."""
        assert self._httpd is not None, "use FakeEmbeddingServer as a context manager"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def calls(self) -> int:
        """How many requests arrived, failed ones included."""
        with self._lock:
            return len(self.requests)

    @property
    def inputs_total(self) -> int:
        """How many texts arrived over every request."""
        with self._lock:
            return sum(len(r.inputs) for r in self.requests)

    def fail_next(self, count: int, *, status: int = 500, retry_after: str | None = None) -> None:
        """Answer the next `count` authenticated requests with `status` (and a `Retry-After` header when given)."""
        with self._lock:
            self._failures.extend(_Failure(status, retry_after) for _ in range(count))

    def __enter__(self) -> FakeEmbeddingServer:
        self._httpd = _Server(("127.0.0.1", 0), _NoDelayHandler if self.nodelay else _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
        assert not self._thread.is_alive(), "the fake embedder's server did not stop within 10 s"
        self._httpd = self._thread = None

    def handle(self, request: RecordedRequest) -> tuple[int, dict[str, str], dict[str, Any]]:
        """The status, extra headers and JSON body answering `request` (called from the handler threads)."""
        with self._lock:
            self.requests.append(request)
            if not self._authorized(request.headers):
                return 401, {}, _error("Incorrect API key provided.", "invalid_api_key")
            if self._failures:
                failure = self._failures.popleft()
                headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
                return failure.status, headers, _error(f"injected failure {failure.status}", "fake_failure")
        if request.path != "/v1/embeddings":
            return 404, {}, _error(f"no route {request.path}", "not_found")
        return self._embed(request)

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        return headers.get("authorization") == f"Bearer {self.api_key}" or headers.get("api-key") == self.api_key

    def _embed(self, request: RecordedRequest) -> tuple[int, dict[str, str], dict[str, Any]]:
        model = str(request.body.get("model", ""))
        if self.model is not None and model != self.model:
            return (
                404,
                {},
                _error(f"The model `{model}` does not exist or you do not have access to it.", "model_not_found"),
            )
        texts = request.inputs
        if len(texts) > self.max_inputs:
            return 400, {}, _error(f"too many inputs: {len(texts)} > {self.max_inputs}", "invalid_request")
        longest = max((len(t) for t in texts), default=0)
        if self.max_input_chars is not None and longest > self.max_input_chars:
            limit = self.max_input_chars
            message = f"This model's maximum context length is {limit} tokens, however you requested {longest} tokens"
            return 400, {}, _error(message, None)
        dim = int(request.body.get("dimensions") or self.dim) if self.honours_dimensions else self.dim
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)} for i, t in enumerate(texts)]
        usage = sum(len(fake_tokens(t)) for t in texts)
        return (
            200,
            {},
            {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": usage, "total_tokens": usage}},
        )


def _error(message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeEmbeddingServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx pools connections
    timeout = 10  # an idle kept-alive connection closes eventually

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._send(400, {}, _error("body is not a JSON object", "invalid_json"))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = cast(_Server, self.server).fake
        self._send(*fake.handle(RecordedRequest(path=urlsplit(self.path).path, headers=headers, body=body)))

    def _send(self, status: int, headers: dict[str, str], body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""


class _NoDelayHandler(_Handler):
    disable_nagle_algorithm = True
