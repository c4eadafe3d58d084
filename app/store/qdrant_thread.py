"""Embedded Qdrant off the event loop: qdrant-client's local mode run on one dedicated thread.

qdrant-client's `AsyncQdrantLocal` is its synchronous local engine with `async def` wrappers: every
search, upsert and scroll computes on the calling thread, so in `javakb serve` a large sync or one
expensive query stalled the whole event loop (`/healthz` up to 51 s, deliveries up to 7.6 s,
issue 10). `threaded_local_client` builds an `AsyncQdrantClient` whose engine is the synchronous
`QdrantLocal`, each of its calls sent to one thread owned by the client. One thread, because the
local engine is not thread-safe (it is a set of Python dicts, and SQLite in persistent mode);
callers keep the async API, so code written against `AsyncQdrantClient` (search, the store) needs
no change. The engine is built on that thread too, so SQLite's same-thread check holds.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from qdrant_client import AsyncQdrantClient
from qdrant_client.async_client_base import AsyncQdrantBase
from qdrant_client.local.qdrant_local import QdrantLocal


class ThreadedLocal:
    """The async engine interface of `AsyncQdrantClient`, served by a `QdrantLocal` on one thread."""

    def __init__(self, location: str) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant-local")
        self._local: QdrantLocal = self._thread.submit(QdrantLocal, location).result()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._local, name)
        if not callable(attribute):
            return attribute
        return functools.partial(self._run, attribute)

    async def _run(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, functools.partial(method, *args, **kwargs))

    async def close(self, **kwargs: Any) -> None:
        """Close the engine (on its thread), then stop the thread."""
        try:
            await self._run(self._local.close, **kwargs)
        finally:
            self._thread.shutdown(wait=True)


def threaded_local_client(location: str) -> AsyncQdrantClient:
    """An `AsyncQdrantClient` over the embedded engine at `location` (`:memory:` or a folder)."""
    client = AsyncQdrantClient(location=":memory:")  # local mode shell; its engine is replaced below
    client._client = cast(AsyncQdrantBase, ThreadedLocal(location))
    return client
