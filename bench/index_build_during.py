"""Searches and writes while `serve`'s background index build runs (`app.store.edge_index`), nothing else going on.

    .venv/bin/python -m bench.index_build_during --points 60000

An Edge store in `/dev/shm` (`EdgeStore(":memory:")`) gets `--points` random 768-dim points (the embedded
model's dimension) with a lexical vector and a 2-KB payload each, builds off. Then three phases, each a
loop of: one dense query (60 nearest, no filter) and one upsert of 64 new points every `STEP_S`, and a
ticker measuring the event loop's lag every 10 ms:

1. `before`: `--seconds` seconds, no index and no build;
2. `during`: the build started (`IndexBuilds.consider`, `serve`'s policy) until it completes;
3. `after`: `--seconds` seconds on the index it built.

Per phase: the query's and the upsert's latency, the points written per second, the loop's lag.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
from qdrant_client import models as qm

from app.store.edge import EdgeStore
from app.store.edge_index import BuildPolicy
from app.store.vectors import DENSE, LEXICAL, IndexModel
from bench.common import latency_summary, load_avg, log

DIM: Final = 768
MODEL: Final = IndexModel(embedding_model="bench-random", dimension=DIM)
STEP_S: Final = 0.2
TICK_S: Final = 0.01
BATCH: Final = 64
PAYLOAD: Final = "x" * 2000


class Points:
    """Random points with consecutive ids."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.next = 0

    def take(self, n: int) -> list[qm.PointStruct]:
        vectors = self.rng.standard_normal((n, DIM)).astype(np.float32)
        out = [
            qm.PointStruct(
                id=str(uuid.UUID(int=self.next + i + 1)),
                vector={
                    DENSE: v.tolist(),
                    LEXICAL: qm.SparseVector(indices=[i % 997, 2000 + i % 7], values=[1.0, 0.5]),
                },
                payload={"text": PAYLOAD, "n": self.next + i},
            )
            for i, v in enumerate(vectors)
        ]
        self.next += n
        return out


async def phase(store: EdgeStore, points: Points, until: Callable[[], bool]) -> dict[str, Any]:
    """Query and write every `STEP_S` until `until()`; the samples' summaries."""
    queries: list[float] = []
    writes: list[float] = []
    lags: list[float] = []
    stop = asyncio.Event()

    async def tick() -> None:
        while not stop.is_set():
            started = time.perf_counter()
            await asyncio.sleep(TICK_S)
            lags.append(time.perf_counter() - started - TICK_S)

    ticker = asyncio.create_task(tick())
    probe = points.rng.standard_normal(DIM).tolist()
    started = time.perf_counter()
    written = 0
    while not until():
        step = time.perf_counter()
        await store.query(lexical=None, dense=probe, where=None, limit=60)
        queries.append(time.perf_counter() - step)
        batch = points.take(BATCH)
        step = time.perf_counter()
        await store.upsert(batch)
        writes.append(time.perf_counter() - step)
        written += len(batch)
        await asyncio.sleep(max(0.0, STEP_S - (time.perf_counter() - step)))
    seconds = time.perf_counter() - started
    stop.set()
    await ticker
    lags.sort()
    return {
        "seconds": round(seconds, 1),
        "dense_query_60": latency_summary(queries) if queries else None,
        "upsert_64": latency_summary(writes) if writes else None,
        "points_written_per_s": round(written / seconds, 1) if seconds else None,
        "loop_lag_ms_p99": round(1000 * lags[int(0.99 * (len(lags) - 1))], 1) if lags else None,
        "loop_lag_ms_max": round(1000 * lags[-1], 1) if lags else None,
    }


def timer(seconds: float) -> Callable[[], bool]:
    deadline = time.perf_counter() + seconds
    return lambda: time.perf_counter() >= deadline


async def run(points_n: int, seconds: float, seed: int) -> dict[str, Any]:
    store = EdgeStore(":memory:", "bench_build_during")
    points = Points(seed)
    try:
        await store.ensure(MODEL)
        log(f"writing {points_n:,} points ...")
        for _ in range(0, points_n, 1024):
            await store.upsert(points.take(1024))
        result: dict[str, Any] = {"points": points.next, "load_average_start": load_avg()}
        log("phase before (no build) ...")
        result["before"] = await phase(store, points, timer(seconds))
        store.builds.policy = BuildPolicy(threshold=1_000, journal_max=1_000_000)
        store.builds.consider(str(await store.target()), True)
        log("phase during (the build) ...")
        result["during"] = await phase(store, points, lambda: store.builds.state.completed > 0)
        await store.builds.wait()
        store.builds.policy = BuildPolicy(threshold=0, journal_max=1)  # no second build in the after phase
        result["build"] = store.builds.state.history
        log("phase after (the index) ...")
        result["after"] = await phase(store, points, timer(seconds))
        result["load_average_end"] = load_avg()
        return result
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.index_build_during", description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=60_000, help="points written first (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the before and after phases")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args.points, args.seconds, args.seed)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
