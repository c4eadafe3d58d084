"""The local socket of `javakb serve`: `javakb index` and `javakb search` while the service runs.

An embedded store can be opened by one process only, so while `javakb serve` holds it the CLI
talks to the service instead: `serve` listens on a Unix socket in the store's folder
(`<JAVAKB_QDRANT__PATH>/javakb.sock`, mode 0600: only the user who owns the store may connect, the
same person the CLI's `LOCAL` access stands for). One JSON request per connection, answered with
JSON lines: `{"progress": [done, total]}` while indexing, then `{"result": ...}` or `{"error": ...}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from app.agents.local_socket import SOCKET_NAME as SOCKET_NAME  # where `serve` listens: declared there, for the hooks
from app.agents.local_socket import socket_path as socket_path
from app.auth.access import LOCAL
from app.core.errors import ServiceError
from app.runtime import Deps
from app.search.context import auto_context, context_answer
from app.search.hits import Hit
from app.search.scoping import Filters, SearchScope
from app.store.payloads import StoredChunk, stored_payload
from app.sync.local_index import index_directory

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 1024
Emit = Callable[[dict[str, Any]], None]


@contextlib.asynccontextmanager
async def serving(deps: Deps, path: Path | None) -> AsyncIterator[None]:
    """Listen on `path` for the CLI while the block runs (nothing when `path` is None)."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # a socket left by a process that died; the store's lock says we own the folder
    server = await asyncio.start_unix_server(lambda r, w: _handle(deps, r, w), path=str(path), limit=MAX_REQUEST_BYTES)
    os.chmod(path, 0o600)
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()
        path.unlink(missing_ok=True)


async def _handle(deps: Deps, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    def emit(message: dict[str, Any]) -> None:
        writer.write(json.dumps(message).encode() + b"\n")

    try:
        request = json.loads(await _request_line(reader))
        emit({"result": await _answer(deps, request, emit)})
    except (ServiceError, ValueError, KeyError, TypeError) as exc:
        emit({"error": str(exc)})
    finally:
        with contextlib.suppress(ConnectionError):
            await writer.drain()
            writer.close()


async def _request_line(reader: asyncio.StreamReader) -> bytes:
    """The request's one line; a longer one than the stream's limit is refused by its size, not asyncio's words."""
    try:
        return await reader.readline()
    except ValueError as exc:  # asyncio: "Separator is found, but chunk is longer than limit"
        raise ValueError(f"the request is longer than {MAX_REQUEST_BYTES} bytes") from exc


async def _answer(deps: Deps, request: dict[str, Any], emit: Emit) -> Any:
    command = request["command"]
    if command == "index":
        run = await index_directory(
            deps,
            Path(request["path"]),
            str(request["repo"]),
            rebuild=bool(request.get("rebuild")),
            drop_others=bool(request.get("drop_others")),
            jobs=int(request.get("jobs", 1)),
            progress=lambda done, total: emit({"progress": [done, total]}),
        )
        return {"counts": dataclasses.asdict(run.counts), "removed_files": run.removed_files}
    if command == "search":
        filters = Filters(**request.get("filters", {}))
        search = deps.search.within(SearchScope(request.get("scope", SearchScope.CODE)))
        hits = await search.search(LOCAL, str(request["query"]), filters, int(request.get("limit", 10)))
        return [wire_hit(hit) for hit in hits]
    if command == "context":
        return await _context(deps, request)
    raise ValueError(f"unknown command {command!r}")


async def _context(deps: Deps, request: dict[str, Any]) -> dict[str, Any]:
    """`auto_context` for the CLI and the agent hooks: the text to inject and the same as data."""
    options = {"max_chars": int(request["max_chars"])} if request.get("max_chars") is not None else {}
    repo = request.get("repo")
    context = await auto_context(deps.search, LOCAL, str(request["task"]), repo=repo and str(repo), **options)
    return context_answer(context)


async def ask(path: Path | None, request: dict[str, Any], progress: Callable[[int, int], None] | None) -> Any:
    """Send a request to a running `javakb serve`; `None` when none listens (open the store directly then).

    A refusal or failure inside the service comes back as a `ServiceError` with its message.
    """
    if path is None or not path.exists():
        return None
    try:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_REQUEST_BYTES * 256)
    except (ConnectionRefusedError, FileNotFoundError):
        return None  # a socket file left behind by a service that is gone
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        async for line in reader:
            message = json.loads(line)
            if "progress" in message and progress is not None:
                progress(*message["progress"])
            elif "error" in message:
                raise ServiceError(f"javakb serve answered: {message['error']}")
            elif "result" in message:
                return message["result"]
        raise ServiceError("javakb serve closed the connection without an answer")
    finally:
        writer.close()


def wire_hit(hit: Hit) -> dict[str, Any]:
    """A hit as the socket sends it: its stored payload as written, read back by `hits_of`."""
    payload = stored_payload(hit.chunk, hit.stored.keys.indexed_at or "")
    return {"id": hit.id, "score": hit.score, "permalink": hit.permalink, "payload": payload}


def hits_of(result: list[dict[str, Any]]) -> list[Hit]:
    """The hits of a search answered by the service."""
    return [
        Hit(id=h["id"], score=h["score"], stored=StoredChunk.from_payload(h["payload"]), permalink=h["permalink"])
        for h in result
    ]
