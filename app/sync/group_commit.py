"""Group commit: concurrent callers each submit one item; one flush serves all that are waiting.

The first item starts a drain task. While a flush is in flight, new items queue up and go out
together in the next flush, so under load a round trip serves many callers and at low load an item
waits for nothing but the current flush. Each caller gets its own result, or the flush's exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

Flush = Callable[[Sequence[T]], Awaitable[Sequence[R]]]


class GroupCommit(Generic[T, R]):
    """Batch concurrent `submit` calls into calls of `flush` (at most `max_batch` items each)."""

    def __init__(self, flush: Flush[T, R], *, max_batch: int = 256) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._flush = flush
        self._max_batch = max_batch
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._drainer: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        """Flush `item` with whatever else is waiting; its result, or the flush's exception."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        if self._drainer is None:
            self._drainer = asyncio.create_task(self._drain())
        # A caller that goes away (a closed connection) leaves its item in the batch: it is still flushed.
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        try:
            while self._waiting:
                batch = self._waiting[: self._max_batch]
                del self._waiting[: self._max_batch]
                await self._run(batch)
        except BaseException as exc:  # cancelled at shutdown: nobody may wait forever
            _fail(self._waiting, exc)
            self._waiting.clear()
            raise
        finally:
            self._drainer = None

    async def _run(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        try:
            results = await self._flush([item for item, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"flush returned {len(results)} results for {len(batch)} items")
        except Exception as exc:
            _fail(batch, exc)
            return
        except BaseException as exc:
            _fail(batch, exc)
            raise
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)


def _fail(waiting: Sequence[tuple[object, asyncio.Future[R]]], exc: BaseException) -> None:
    for _, future in waiting:
        if future.done():
            continue
        if isinstance(exc, asyncio.CancelledError):
            future.cancel()
        else:
            future.set_exception(exc)
