"""The ids that say what a log line belongs to: delivery, project, job and request, in context variables.

Set where they become known (`bound`: the receiver for a delivery, a job's start for its id, a sync
for its project, `RequestIds` for each HTTP request) and read by the log handler's `ContextIds`
filter, so every line logged meanwhile, by any module, carries them without passing them around.
Context variables follow asyncio tasks: a job's task or a request's task sees only its own.
"""

from __future__ import annotations

import contextvars
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

IDS = ("delivery_id", "project_id", "job_id", "request_id")
_VARS: dict[str, contextvars.ContextVar[str | None]] = {
    name: contextvars.ContextVar(f"javakb_{name}", default=None) for name in IDS
}
REQUEST_ID_HEADER = b"x-request-id"
_CLIENT_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,64}$")  # a client's id is taken only when it cannot forge a log line


def current() -> dict[str, str]:
    """The ids set in this context."""
    return {name: value for name, var in _VARS.items() if (value := var.get()) is not None}


def bind(**ids: object) -> list[contextvars.Token[str | None]]:
    """Set some ids (None values are skipped) until `unbind` resets them."""
    return [_VARS[name].set(str(value)) for name, value in ids.items() if value is not None]


def unbind(tokens: list[contextvars.Token[str | None]]) -> None:
    """Reset ids set by `bind`."""
    for token in reversed(tokens):
        token.var.reset(token)


@contextmanager
def bound(**ids: object) -> Iterator[None]:
    """Set some ids for the block (`bound(project_id=12)`)."""
    tokens = bind(**ids)
    try:
        yield
    finally:
        unbind(tokens)


def request_id(headers: Mapping[bytes, bytes] | None = None) -> str:
    """The client's `X-Request-Id` when it is a short safe token, else a new random one."""
    given = (headers or {}).get(REQUEST_ID_HEADER)
    return given.decode() if given is not None and _CLIENT_ID.match(given) else uuid.uuid4().hex


class RequestIds:
    """Pure ASGI middleware: each HTTP request runs with a `request_id`, echoed in `X-Request-Id`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Bind the id for the request, and add it to the response's headers."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(dict(scope.get("headers") or []))

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (REQUEST_ID_HEADER, rid.encode())]}
            await send(message)

        with bound(request_id=rid):
            await self.app(scope, receive, send_with_id)
