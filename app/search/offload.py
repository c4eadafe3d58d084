"""A search's CPU work off the event loop: reading payloads, ranking.

In `javakb serve` one event loop answers the receiver, MCP, REST and `/healthz`. A worst-case search
(`scope="all"`, 64 words naming methods and asking for their callers) decodes thousands of payloads
and walks the type hierarchy: 300-450 ms of CPU on this machine, in stretches of 15-60 ms between two
awaits. Eight of them at once kept `/healthz` waiting over a second (issue 24). `SearchService` runs
those pure stretches through an `Offload`: `bounded(executor)` runs them on a thread pool of the
service's own (one thread in `open_deps`: under the GIL more threads add no throughput, only more
contenders for the loop's turn), so the loop only passes results along. Work shorter than a hand-over to
the thread and back (about 0.1 ms of CPU, more in wall time under load: the question's parse and vector,
bounded by `check_query`) runs in place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Protocol, TypeVar

T = TypeVar("T")


class Offload(Protocol):
    """Runs a pure function (no I/O, no event loop) somewhere other than the event loop; awaits its result."""

    def __call__(self, work: Callable[[], T], /) -> Awaitable[T]:
        """`work()`'s result, computed off the event loop."""
        ...


def bounded(executor: Executor | None) -> Offload:
    """An `Offload` on `executor` (None: the event loop's default thread pool, for the CLI and tests)."""

    async def offload(work: Callable[[], T], /) -> T:
        return await asyncio.get_running_loop().run_in_executor(executor, work)

    return offload
