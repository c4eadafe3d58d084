"""The measuring parts of bench.hybrid_latency: a named thread's CPU from /proc, the embedding clock, the RSS probe."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.common import timed_async
from bench.hybrid_latency import EmbedClock, embedding_report, rss_probe, thread_cpu_s
from testkit.standins import around


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_thread_cpu_counts_only_the_threads_of_that_name() -> None:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="i26probe") as pool:
        before = thread_cpu_s("i26probe")
        pool.submit(_spin, 0.3).result(timeout=30)
        spent = thread_cpu_s("i26probe") - before
        other = thread_cpu_s("no-such-thread")
    assert 0.2 <= spent <= 1.0  # clock ticks: 10 ms resolution
    assert other == 0.0
    assert threading.current_thread().name == "MainThread"


class _Embedder:
    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]


async def test_the_embedding_clock_counts_texts_calls_and_time() -> None:
    clock = EmbedClock()
    embedder = around(_Embedder(), embed=timed_async(clock.record))
    await embedder.embed(["a", "b", "c"])
    await embedder.embed(["d"])
    assert (clock.texts, clock.calls) == (4, 2)
    report = embedding_report(clock, embed_cpu_s=0.002, index={"index_seconds_total": 2.0, "chunks": 4})
    assert report["chunks_per_cpu_s"] == 2000
    assert report["chunks_per_s_whole_indexing"] == 2


async def test_the_rss_probe_opens_the_service_and_searches_an_empty_store() -> None:
    probe = await rss_probe("embedded")
    assert probe["provider"] == "embedded"
    assert probe["rss_mb"] >= probe["rss_mb_opened"] > 0
