"""The local socket of `javakb serve`: `javakb index`, `search` and `context` while the service runs.

An embedded store can be opened by one process only, so while `javakb serve` holds it the CLI
talks to the service instead: `serve` listens on a Unix socket in the store's folder
(`<JAVAKB_QDRANT__PATH>/javakb.sock`, mode 0600: only the user who owns the store may connect, the
same person the CLI's `LOCAL` access stands for). One JSON request per connection, answered with
JSON lines: `{"progress": [done, total]}` while indexing, then `{"result": ...}` or `{"error": ...}`.
The clients (`app.agents.local_socket`) need the standard library only; this module is the service's side.

The socket belongs to the process that bound it: a second `serve` on the same store finds it answering
and refuses to start (`AlreadyServingError`) without touching it, a socket nobody accepts on (its
service was killed) is replaced, and a service removes the socket on exit only while it is still the
one it bound. A lock file beside it (`javakb.sock.lock`) makes each of these checks one step.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from app.agents.local_socket import SOCKET_NAME as SOCKET_NAME  # where `serve` listens: declared there, for the hooks
from app.agents.local_socket import socket_path as socket_path
from app.auth.access import LOCAL
from app.core.errors import ServiceError
from app.runtime import Deps
from app.search.context import DEFAULT_MAX_CHARS, auto_context, context_answer
from app.search.hits import Hit
from app.search.scoping import Filters, SearchScope, Where

logger = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], None]


LOCK_SUFFIX = ".lock"
MAX_REQUEST_BYTES = 64 * 1024  # asyncio's default line limit, named: a longer request is refused by its size
BACKLOG = 64


class AlreadyServingError(ServiceError):
    """Another process answers on the socket: a second `javakb serve` on the same store."""


@contextlib.asynccontextmanager
async def serving(
    deps: Deps, path: Path | None, *, opening: Callable[[], Awaitable[object]] | None = None
) -> AsyncIterator[None]:
    """Listen on `path` for the CLI while the block runs (nothing when `path` is None).

    `opening` (the store's) is awaited once the socket is claimed and before it accepts: a request
    arriving meanwhile waits in the socket's backlog instead of opening the store beside it.
    """
    if path is None:
        if opening is not None:
            await opening()
        yield
        return
    with claimed(path) as listener:
        if opening is not None:
            await opening()
        # Bound here, not by asyncio: `start_unix_server(path=...)` would remove a socket another serve listens on.
        server = await asyncio.start_unix_server(
            lambda r, w: _handle(deps, r, w), sock=listener, limit=MAX_REQUEST_BYTES
        )
        try:
            yield
        finally:
            server.close()
            await server.wait_closed()


@contextlib.contextmanager
def claimed(path: Path) -> Iterator[socket.socket]:
    """A socket listening at `path` for the block, removed after it while the file is still this one.

    Raises:
        AlreadyServingError: a process accepts connections at `path` (it is left as it is).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with listener:
        with _locked(path):
            if _answers(path):
                raise AlreadyServingError(
                    f"another javakb serve already listens on {path}: stop it first, or give this one "
                    "another JAVAKB_QDRANT__PATH"
                )
            path.unlink(missing_ok=True)  # a socket nobody accepts on: its service was killed
            listener.bind(str(path))
            os.chmod(path, 0o600)
            bound = _identity(path)
        listener.listen(BACKLOG)
        listener.setblocking(False)
        try:
            yield listener
        finally:
            with _locked(path):
                if _identity(path) == bound:
                    path.unlink()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold the lock beside `path` for the block: checking, replacing and removing the socket are one step each."""
    fd = os.open(path.with_name(path.name + LOCK_SUFFIX), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _answers(path: Path) -> bool:
    """Whether a process accepts connections at `path` (refused or missing: no one; busy counts as someone)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return False
        except (TimeoutError, BlockingIOError):
            return True  # its backlog is full: a busy service, not a dead one
        return True


def _identity(path: Path) -> tuple[int, int] | None:
    """The file at `path` (device and inode), None when there is none."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


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
        # Here, not at the top: recording a local project needs PostgreSQL's adapter, and `javakb search`
        # imports this module without a service (`hit_view`) and must not load it (tests/app/test_cli_startup.py).
        from app.sync.local_project import index_local

        run = await index_local(
            deps,
            Path(request["path"]),
            str(request["repo"]),
            rebuild=bool(request.get("rebuild")),
            drop_others=bool(request.get("drop_others")),
            jobs=int(request.get("jobs", 1)),
            progress=lambda done, total: emit({"progress": [done, total]}),
        )
        return {"counts": dataclasses.asdict(run.counts), "removed_files": run.removed_files, "left_out": run.left_out}
    if command == "search":
        filters = Filters(**request.get("filters", {}))
        search = deps.search.within(SearchScope(request.get("scope", SearchScope.CODE)))
        hits = await search.search(LOCAL, str(request["query"]), filters, int(request.get("limit", 10)))
        return [hit_view(hit) for hit in hits]
    if command == "context":
        return await _context(deps, request)
    raise ValueError(f"unknown command {command!r}")


async def _context(deps: Deps, request: dict[str, Any]) -> dict[str, Any]:
    """`auto_context` for the CLI and the agent hooks: the text to inject and the same as data."""
    chars = int(request["max_chars"]) if request.get("max_chars") is not None else DEFAULT_MAX_CHARS
    repo = request.get("repo")
    where = Where(repo=repo and str(repo))
    context = await auto_context(deps.search, LOCAL, str(request["task"]), where=where, max_chars=chars)
    return context_answer(context)


def hit_view(hit: Hit) -> dict[str, Any]:
    """What `javakb search` shows of a hit (its citation and kind; no score: `app.search.results.HitItem`)."""
    return {
        "citation": hit.citation(),
        "symbol_type": hit.symbol_type,
        "stereotype": hit.chunk.stereotype,
    }
