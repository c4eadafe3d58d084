"""`javakb admin rebuild [--watch]`: start a model rebuild from inside a deployment, and follow it.

It talks to PostgreSQL and Redis with the service's own settings (run it where the web or worker
pods run: `kubectl exec deploy/<release>-web -- javakb admin rebuild --watch`), through the same
`app.sync.rebuild.request` as `POST /admin/rebuild`; the worker does the rest.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import TextIO

from app.core.settings import Settings
from app.core.states import RebuildStatus
from app.rest.rebuilds import rebuild_report
from app.sync import rebuild
from entry.deps import open_service

WATCH_EVERY_S = 2.0
FINISHED = frozenset({RebuildStatus.DONE, RebuildStatus.FAILED})


def run_rebuild(args: argparse.Namespace, settings: Settings, out: TextIO) -> int:
    """Start a rebuild (or pick one with `--id`); with `--watch`, a line per change until it ends; 1 if it failed."""
    return asyncio.run(follow(settings, args.id, args.watch, out))


async def follow(
    settings: Settings,
    rebuild_id: int | None,
    watch: bool,
    out: TextIO,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> int:
    """Start a rebuild (or follow `rebuild_id`) and print its progress; `sleep` waits between looks."""
    async with open_service(settings) as deps:
        if rebuild_id is None:
            rebuild_id = await rebuild.request(deps)
            print(f"rebuild {rebuild_id} queued", file=out, flush=True)
        db = deps.db
        last = ""
        while True:
            row = await db.rebuild(rebuild_id)
            if row is None:
                print(f"no rebuild {rebuild_id}", file=out)
                return 1
            answer = rebuild_report(row, await db.rebuild_progress(rebuild_id), datetime.now(UTC))
            counts = {str(state): n for state, n in answer.projects.items()}
            line = progress_line(answer.status, counts, answer.chunks, answer.eta_s, answer.error)
            if line != last:
                print(f"rebuild {rebuild_id}: {line}", file=out, flush=True)
                last = line
            if not watch or row.status in FINISHED:
                return 1 if row.status == RebuildStatus.FAILED else 0
            await sleep(WATCH_EVERY_S)


def progress_line(status: str, projects: Mapping[str, int], chunks: int, eta_s: float | None, error: str | None) -> str:
    """One line of progress (pure)."""
    counts = ", ".join(f"{n} {state}" for state, n in sorted(projects.items())) or "no projects listed yet"
    eta = f", about {eta_s:.0f} s left" if eta_s is not None else ""
    return f"{status}: {counts}; {chunks} chunks{eta}" + (f"; {error}" if error else "")
