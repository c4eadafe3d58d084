"""The embedded worker's supervisor: restarts a worker whose poll loop died, with backoff, and says so."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from arq.connections import RedisSettings
from arq.worker import Worker, func

from app.ops.supervisor import WorkerSupervisor
from tests.support.processes import free_port


async def noop(ctx: dict[str, Any]) -> None:
    """The one function the worker needs to be built."""


def unreachable_worker() -> Worker:
    """A real arq worker whose Redis does not exist: its run fails at once, as after a Redis restart."""
    settings = RedisSettings(host="127.0.0.1", port=free_port(), conn_retries=0, conn_timeout=1)
    return Worker(functions=[func(noop, name="noop")], redis_settings=settings, handle_signals=False)


async def test_a_dying_worker_is_restarted_with_doubling_backoff_and_reported() -> None:
    delays: list[float] = []
    now = [0.0]
    supervisor: WorkerSupervisor

    async def sleep(seconds: float) -> None:
        delays.append(seconds)
        health = supervisor.health()
        assert not health.running and health.describe().startswith("error: worker stopped (")
        if len(delays) == 6:
            raise asyncio.CancelledError

    supervisor = WorkerSupervisor(unreachable_worker, max_backoff_s=8, sleep=sleep, clock=lambda: now[0])
    with pytest.raises(asyncio.CancelledError):
        await supervisor.run()
    assert delays == [1, 2, 4, 8, 8, 8]
    assert supervisor.health().restarts == 5
    assert "Connection" in (supervisor.health().last_error or "")


async def test_the_backoff_starts_over_after_a_worker_ran_steadily() -> None:
    delays: list[float] = []
    now = [0.0]

    def build() -> Worker:
        now[0] += 100.0 if len(delays) == 3 else 0.0  # the fourth worker runs for 100 s before it dies
        return unreachable_worker()

    async def sleep(seconds: float) -> None:
        delays.append(seconds)
        if len(delays) == 5:
            raise asyncio.CancelledError

    supervisor = WorkerSupervisor(build, steady_s=60, sleep=sleep, clock=lambda: now[0])
    with pytest.raises(asyncio.CancelledError):
        await supervisor.run()
    assert delays == [1, 2, 4, 1, 2]
