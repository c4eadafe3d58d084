"""The whole web app (`create_app`) served by uvicorn on a loopback port, for tests over real HTTP.

The server runs in its own thread with its own event loop, and its `Deps` (Qdrant, PostgreSQL, Redis
clients) are opened on that loop, so tests may call it from sync code, from their own event loop or
from a subprocess (the MCP Inspector) without sharing a loop with it. The port is bound before the
server starts (port 0), so there is no race for a free port.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from app.core.settings import Settings
from app.runtime import ServiceDeps
from app.sync.local_index import index_directory
from entry.deps import open_service
from entry.http_server import http_protocol
from entry.web import create_app

START_TIMEOUT_S = 30.0
Prepare = Callable[[ServiceDeps], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveApp:
    """Where the running app answers."""

    base_url: str  # http://127.0.0.1:PORT

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"


class _ServerThread(threading.Thread):
    """Opens Deps, indexes the checkout, serves until told to stop."""

    def __init__(
        self,
        settings: Settings,
        sock: socket.socket,
        checkout: Path | None,
        repo: str,
        prepare: Prepare | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name="live-app", daemon=True)
        self.settings = settings
        self.prepare = prepare
        self.clock = clock
        self.sock = sock
        self.checkout = checkout
        self.repo = repo
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.server: uvicorn.Server | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to the test thread by `serve_app`
            self.error = exc
        finally:
            self.ready.set()

    async def _serve(self) -> None:
        with_gitlab = self.settings.gitlab.token is not None
        async with open_service(self.settings, with_gitlab=with_gitlab) as deps:
            await deps.store.ensure(await deps.index_model())
            if self.checkout is not None:
                await index_directory(deps, self.checkout, self.repo)
            if self.prepare is not None:
                await self.prepare(deps)
            config = uvicorn.Config(
                create_app(self.settings, deps, clock=self.clock),
                http=http_protocol(self.settings.access),  # as `javakb web` and `serve` run it
                lifespan="on",
                log_level="warning",
                ws="none",
                timeout_graceful_shutdown=2,
            )
            self.server = uvicorn.Server(config)
            task = asyncio.create_task(self.server.serve(sockets=[self.sock]))
            while not self.server.started and not task.done():
                await asyncio.sleep(0.01)  # uvicorn offers no startup callback; `started` is its signal
            self.ready.set()
            await task

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.join(timeout=10)
        assert not self.is_alive(), "the live app did not stop within 10 s"  # loud, not a thread left to hang the exit


@contextmanager
def serve_app(
    settings: Settings | Callable[[str], Settings],
    *,
    checkout: Path | None = None,
    repo: str = "acme/shop",
    prepare: Prepare | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[LiveApp]:
    """Serve `create_app(settings, deps, clock=clock)` on 127.0.0.1, `checkout` indexed as `repo` (None: empty).

    `prepare(deps)` runs on the server's loop before it starts serving (a sync, for example); the
    worker deps (GitLab client) are opened when the settings carry a GitLab token. `settings` may be a
    function of the base URL, for settings that must name it (the OAuth proxy's public URL).
    """
    # IPPROTO_TCP, not 0: asyncio enables TCP_NODELAY only for it, else replies wait ~40 ms for an ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}"
    resolved = settings(base_url) if callable(settings) else settings
    thread = _ServerThread(resolved, sock, checkout, repo, prepare, clock)
    thread.start()
    try:
        if not thread.ready.wait(START_TIMEOUT_S):
            raise TimeoutError(f"the app did not start on port {port} within {START_TIMEOUT_S}s")
        if thread.error is not None or thread.server is None or not thread.server.started:
            raise RuntimeError(f"the app failed to start on port {port}") from thread.error
        yield LiveApp(base_url=base_url)
    finally:
        thread.stop()
        sock.close()
    if thread.error is not None:
        raise RuntimeError("the app failed while serving") from thread.error
