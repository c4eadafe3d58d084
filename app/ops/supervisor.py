"""Keep the embedded worker of `javakb serve` running, and say truthfully whether it is.

arq's `Worker.async_run` returns by raising as soon as one Redis call fails (a Redis restart, a
network blip): in `javakb serve` the worker task then ended for good while the web side kept
answering 202 and `/readyz` said ready (issue 10). `WorkerSupervisor.run` builds a fresh worker
each time the previous one stopped, after a backoff (1 s doubling to `max_backoff_s`, back to the
start once a worker has run for `steady_s`). The Redis pool reconnects by itself on the next
command; a new worker's start-up sweep re-enqueues whatever PostgreSQL records as not done, so
jobs a restarted Redis forgot are not stranded. `health()` is the signal `/readyz` reports.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from arq.worker import Worker

logger = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerHealth:
    """What the supervisor knows: whether a worker runs now, and the last reason one stopped."""

    running: bool
    restarts: int
    last_error: str | None

    def describe(self) -> str:
        """`ok`, or why not (the form `/readyz` reports its checks in)."""
        if self.running:
            return "ok"
        return f"error: worker stopped ({self.last_error or 'not started'}); restart {self.restarts} pending"


class WorkerSupervisor:
    """Runs `build()`'s worker, and a new one whenever it stops, until cancelled."""

    def __init__(
        self,
        build: Callable[[], Worker],
        *,
        max_backoff_s: float = 30.0,
        steady_s: float = 60.0,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._build = build
        self._max_backoff_s = max_backoff_s
        self._steady_s = steady_s
        self._sleep = sleep
        self._clock = clock
        self._running = False
        self._restarts = 0
        self._last_error: str | None = None
        self.worker: Worker | None = None

    def health(self) -> WorkerHealth:
        """The worker's state now."""
        return WorkerHealth(running=self._running, restarts=self._restarts, last_error=self._last_error)

    async def run(self) -> None:
        """Run workers one after another; returns only by cancellation."""
        backoff = 1.0
        while True:
            started = self._clock()
            await self._run_once()
            if self._clock() - started >= self._steady_s:
                backoff = 1.0
            logger.error("embedded worker stopped (%s); restarting in %.0f s", self._last_error, backoff)
            await self._sleep(backoff)
            backoff = min(self._max_backoff_s, backoff * 2)
            self._restarts += 1

    async def _run_once(self) -> None:
        self.worker = self._build()
        self._running = True
        try:
            await self.worker.async_run()
            self._last_error = "returned"
        except Exception as exc:  # any failure of the poll loop: Redis gone, a bug; restart either way
            self._last_error = f"{type(exc).__name__}: {exc}"
        finally:
            self._running = False


async def close_worker(worker: Worker, within_s: float = 30.0) -> None:
    """Stop `worker` (its jobs in flight are cancelled, arq re-runs them) and close it, within `within_s`.

    arq's `Worker.close` cancels the jobs in flight and then gathers them: a job cancelled before arq's own
    handler could catch it (a busy machine makes that likely) ends cancelled, and `close` raises CancelledError
    before it deletes the worker's health record and closes its pool. So: cancel, wait for the jobs keeping
    their outcomes, forget the finished ones (as arq's poll loop does), then close. TimeoutError past `within_s`.
    """
    worker.handle_sig(signal.SIGUSR1)  # what `close` does first: cancels the jobs in flight and the poll loop
    async with asyncio.timeout(within_s):
        await asyncio.gather(*worker.tasks.values(), return_exceptions=True)
        for job_id, task in list(worker.tasks.items()):
            if task.done():
                del worker.tasks[job_id]
        await worker.close()
