"""A `/rerank` endpoint over real loopback HTTP that scores a document by the query words it contains.

Speaks the Jina/Cohere shape (`{"results": [{"index", "relevance_score"}]}`) or, with `tei=True`,
TEI's bare list of `{"index", "score"}`; records every request body; can fail, stall or answer
garbage on demand, for the outage paths of `app.search.crossencoder`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def overlap(query: str, document: str) -> float:
    """How many distinct query words the document contains (case-insensitive)."""
    words = set(re.findall(r"\w+", query.lower()))
    return float(sum(1 for w in words if w in document.lower()))


class FakeReranker:
    """Start with `with FakeReranker() as r:`; point settings at `r.base_url`."""

    def __init__(self, *, tei: bool = False) -> None:
        self.tei = tei
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.delay_s = 0.0
        self.garbage = False
        self.seen_auth: list[str | None] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeReranker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> tuple[int, object]:
        self.requests.append(body)
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.status != 200:
            return self.status, {"error": "unavailable"}
        if self.garbage:
            return 200, {"results": [{"index": 0}]}
        scores = [overlap(body["query"], d) for d in body["documents"]]
        if self.tei:
            return 200, [{"index": i, "score": s} for i, s in enumerate(scores)]
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
        return 200, {"results": [{"index": i, "relevance_score": scores[i]} for i in ranked]}


def _handler(fake: FakeReranker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            fake.seen_auth.append(self.headers.get("Authorization"))
            status: int
            body: object
            if self.path != "/rerank":
                status, body = 404, {"error": f"no route {self.path}"}
            else:
                status, body = fake.answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
