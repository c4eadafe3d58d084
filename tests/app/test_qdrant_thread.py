"""Embedded Qdrant runs off the event loop: the loop keeps serving while the engine computes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from app.core.settings import QdrantSettings
from app.store.qdrant_thread import threaded_local_client
from app.store.vectors import VectorStore, open_client

N = 20_000


def points(n: int) -> list[qm.PointStruct]:
    return [qm.PointStruct(id=i, vector=[float(i % 7), 1.0, float(i % 3), 0.5], payload={"n": i}) for i in range(n)]


async def longest_stall(client: AsyncQdrantClient) -> tuple[float, float]:
    """(the longest the loop went without running a 1 ms ticker, the call's duration) for a large upsert."""
    await client.create_collection("c", vectors_config=qm.VectorParams(size=4, distance=qm.Distance.COSINE))
    batch = points(N)
    longest = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    started = time.perf_counter()
    await client.upsert("c", batch)
    duration = time.perf_counter() - started
    done.set()
    await tick
    return longest, duration


async def test_a_large_upsert_does_not_stall_the_event_loop() -> None:
    threaded = threaded_local_client(":memory:")
    inline = AsyncQdrantClient(location=":memory:")  # qdrant-client's own local mode, for comparison
    try:
        stall, duration = await longest_stall(threaded)
        inline_stall, inline_duration = await longest_stall(inline)
    finally:
        await threaded.close()
        await inline.close()
    assert inline_stall > 0.5 * inline_duration  # the reference really blocks the loop for the whole call
    assert stall < 0.25 * duration, (stall, duration)  # ours leaves it running


async def test_the_store_of_the_embedded_mode_answers_and_persists(tmp_path: Path) -> None:
    settings = QdrantSettings(path=str(tmp_path / "qdrant"))
    client = open_client(settings)
    await client.create_collection("c", vectors_config=qm.VectorParams(size=4, distance=qm.Distance.COSINE))
    await client.upsert("c", points(10))
    hits = (await client.query_points("c", query=[1.0, 1.0, 1.0, 0.5], limit=3)).points
    assert len(hits) == 3
    await client.close()
    reopened = VectorStore(open_client(settings), "c")  # SQLite written on the engine's own thread persisted
    try:
        assert (await reopened.client.count("c", exact=True)).count == 10
    finally:
        await reopened.close()
