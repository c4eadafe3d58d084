"""An OpenAI-compatible `/chat/completions` endpoint over real loopback HTTP that answers from a rule.

The answer names the first method or type declared in the user message ("Describes <name>."), so
a test can tell which chunk a description belongs to; it can fail, stall or answer garbage.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_SYMBOL = re.compile(r"^symbol: (\S+)$", re.MULTILINE)


class FakeChat:
    """Start with `with FakeChat() as chat:`; point settings at `chat.base_url` (it ends in /v1)."""

    def __init__(self, answer: str = "Describes {name}, an invoice step.") -> None:
        self.template = answer
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.delay_s = 0.0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> tuple[int, object]:
        with self._lock:
            self.requests.append(body)
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.status != 200:
            return self.status, {"error": {"message": "unavailable"}}
        match = _SYMBOL.search(body["messages"][-1]["content"])
        name = match.group(1).rsplit(".", 1)[-1] if match else "?"
        message = {"role": "assistant", "content": self.template.format(name=name)}
        return 200, {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}


def _handler(fake: FakeChat) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            status: int
            body: object
            if self.path != "/v1/chat/completions":
                status, body = 404, {"error": {"message": f"no route {self.path}"}}
            else:
                status, body = fake.answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError):  # the client gave up waiting (a timeout test)
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
