"""The `javakb` commands that run the service: `web`, `worker` and `serve` (both, with one local index).

Like every command they import what they need when they run (`entry.cli`'s rule), and refuse to start
on weak secrets or a refused C reader (`app.core.startup_checks`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.env_names import warn_unknown
from app.core.settings import Settings
from app.core.startup_checks import check_secrets, secret_values

if TYPE_CHECKING:
    from app.runtime import Deps


def _needs_server(settings: Settings, command: str) -> bool:
    if settings.qdrant.url:
        return True
    print(
        f"javakb {command}: embedded Qdrant can be opened by one process only; set JAVAKB_QDRANT__URL to run "
        "web and worker apart, or run `javakb serve` (receiver and worker in one process)",
        file=sys.stderr,
    )
    return False


def run_web(args: argparse.Namespace, settings: Settings) -> int:
    """The web application alone (scale it out behind a load balancer)."""
    from app.core.logs import configure_logging

    if not _needs_server(settings, "web"):
        return 2
    configure_logging(settings.log_level, settings.log_format, secret_values(settings))
    warn_unknown(os.environ)
    check_secrets(settings)
    with asyncio.Runner(loop_factory=_auto_loop()) as runner:  # the loop uvicorn.run's `auto` would pick
        runner.run(_web(settings))
    return 0


def _auto_loop() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """Uvloop's loop when it is installed (uvicorn's `loop="auto"`), else asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop comes with uvicorn[standard]
        return None
    return uvloop.new_event_loop


async def _web(settings: Settings) -> None:
    """Open the services first, as `serve` does: one that is down is `main`'s one message, not a lifespan traceback."""
    import uvicorn

    from entry.deps import open_service
    from entry.http_server import http_protocol
    from entry.web import create_app

    async with open_service(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        # log_config=None: uvicorn's lines go through our handler (JSON when asked, secrets redacted)
        config = uvicorn.Config(
            create_app(settings, deps),
            host=settings.host,
            port=settings.port,
            lifespan="on",
            log_config=None,
            http=http_protocol(settings.access),
        )
        await uvicorn.Server(config).serve()


def run_worker(args: argparse.Namespace, settings: Settings) -> int:
    """The sync worker alone."""
    from app.core.logs import configure_logging

    if not _needs_server(settings, "worker"):
        return 2
    configure_logging(settings.log_level, settings.log_format, secret_values(settings))
    warn_unknown(os.environ)
    check_secrets(settings, receives_hooks=False)
    asyncio.run(_worker(settings))
    return 0


async def _worker(settings: Settings) -> None:
    from app.ops.scrape import guarded
    from app.ops.supervisor import close_worker
    from app.ops.worker_health import health_endpoint
    from entry.deps import open_sync
    from entry.worker import build_worker

    async with open_sync(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        worker = build_worker(settings, deps)
        try:
            async with health_endpoint(settings, deps.queue, guarded(deps)):
                await worker.async_run()
        finally:
            await close_worker(worker)


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    """Receiver and worker in one process, sharing one Qdrant client (the embedded default)."""
    from app.core.logs import configure_logging

    configure_logging(settings.log_level, settings.log_format, secret_values(settings))
    warn_unknown(os.environ)
    check_secrets(settings)
    watched = [*map(Path, settings.watch), *args.watch]
    missing = [str(p) for p in watched if not p.is_dir()]
    if missing:
        print(f"javakb serve: --watch: not a directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    asyncio.run(serve(settings, watched))
    return 0


async def serve(settings: Settings, watched: Sequence[Path] = ()) -> None:
    """Run uvicorn and the arq worker on one event loop until the server stops.

    The worker is supervised: restarted with backoff whenever it stops (a Redis restart), and its
    state is part of `/readyz`. `javakb index` and `javakb search` reach this process through its
    local socket (`entry.local_api`); `watched` checkouts are indexed and kept fresh (`app.sync.watch`).
    """
    import uvicorn

    from app.core.errors import QueueUnavailableError
    from app.jobs.redis import translated
    from app.ops.supervisor import WorkerSupervisor, close_worker
    from app.sync.indexed_here import record_indexed_here
    from app.sync.watch import watch
    from entry.deps import open_service
    from entry.http_server import http_protocol
    from entry.local_api import serving, socket_path
    from entry.web import create_app
    from entry.worker import build_worker

    async with (
        # GitLab only where its URL is set: without it deliveries are recorded and nothing syncs (`entry.worker`)
        open_service(settings, with_gitlab=bool(settings.gitlab.url)) as deps,
        # The socket claimed first (a second serve refuses before touching the store), answered once it is open.
        serving(deps, socket_path(settings.qdrant), opening=lambda: _opened(deps)),
    ):
        supervisor = WorkerSupervisor(lambda: build_worker(settings, deps, handle_signals=False))
        app = create_app(settings, deps, worker_health=supervisor.health)
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            lifespan="on",
            log_config=None,
            http=http_protocol(settings.access),
        )
        server = uvicorn.Server(config)
        supervised = asyncio.create_task(supervisor.run())
        stop_watching = asyncio.Event()

        async def local() -> None:
            await record_indexed_here(deps)  # what `javakb index` wrote while no serve ran, then the watched trees
            await watch(deps, watched, settings.watch_interval_s, stop_watching)

        watching = asyncio.create_task(local())
        try:
            await server.serve()
        finally:
            stop_watching.set()
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            supervised.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await supervised
            if supervisor.worker is not None:
                with contextlib.suppress(QueueUnavailableError), translated():
                    await close_worker(supervisor.worker)


async def _opened(deps: Deps) -> None:
    """The index's collection opened (created when missing) for the configured embedding model."""
    await deps.store.ensure(await deps.index_model())
