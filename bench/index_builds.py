"""What `serve`'s background index builds (`app.store.edge_index`) do to a store being written (`bench.hybrid_latency`).

`BuildProbe` runs beside the indexing: every `PROBE_S` one dense query (60 nearest, a fixed vector) timed,
the store's point count, and the event loop's lag (a ticker), each sample tagged with whether a build
was running then; so the search latency and the write throughput with and without a build running, in
the same run. `settle` waits (bounded) until no build runs and none is due: the index is then complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Final

from bench.common import latency_summary, log

PROBE_S: Final = 0.5
TICK_S: Final = 0.01
SETTLE_LIMIT_S: Final = 3600.0


@dataclass
class BuildProbe:
    """Samples taken while the store is written (see the module docstring)."""

    store: Any
    vector: list[float]
    queries: dict[bool, list[float]] = field(default_factory=lambda: {False: [], True: []})
    counts: list[tuple[float, int, bool]] = field(default_factory=list)
    lag: dict[bool, list[float]] = field(default_factory=lambda: {False: [], True: []})
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    def building(self) -> bool:
        return self.store.builds.state.running is not None

    async def run(self) -> None:
        ticker = asyncio.create_task(self._tick())
        try:
            while not self._stop.is_set():
                started = time.perf_counter()
                await self.store.query(lexical=None, dense=self.vector, where=None, limit=60)
                self.queries[self.building()].append(time.perf_counter() - started)
                self.counts.append((time.perf_counter(), await self.store.count(), self.building()))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), PROBE_S)
        finally:
            ticker.cancel()

    async def _tick(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(TICK_S)
            self.lag[self.building()].append(time.perf_counter() - started - TICK_S)

    def stop(self) -> None:
        self._stop.set()

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for running, label in ((False, "no_build_running"), (True, "build_running")):
            rates = [
                (b[1] - a[1]) / (b[0] - a[0])
                for a, b in zip(self.counts, self.counts[1:], strict=False)
                if a[2] == running and b[2] == running and b[0] > a[0]
            ]
            lags = self.lag[running]
            out[label] = {
                "dense_query_60": latency_summary(self.queries[running]) if self.queries[running] else None,
                "points_written_per_s_mean": round(statistics.fmean(rates), 1) if rates else None,
                "loop_lag_ms_p99": round(1000 * sorted(lags)[int(0.99 * (len(lags) - 1))], 1) if lags else None,
                "loop_lag_ms_max": round(1000 * max(lags), 1) if lags else None,
                "seconds_sampled": round(TICK_S * len(lags), 1),
            }
        return out


async def settle(store: Any) -> dict[str, Any]:
    """Wait until no build runs and none is due for the alias's generation; how long it took and what ran."""
    started = time.perf_counter()
    name = await store.target()
    while time.perf_counter() - started < SETTLE_LIMIT_S:
        await store.builds.wait()
        completed = store.builds.state.completed
        store.builds.consider(name, True)
        await store.builds.wait()
        if store.builds.state.completed == completed and store.builds.state.running is None:
            break
        log(f"  a build completed after indexing ({time.perf_counter() - started:.0f} s)")
    info = (await store._shard()).info()
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "state": dataclasses.asdict(store.builds.state),
        "points": info.points_count,
        "indexed_vectors": info.indexed_vectors_count,
        "segments": info.segments_count,
    }
