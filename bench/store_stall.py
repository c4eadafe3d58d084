"""How long the event loop stalls while the embedded store works, for each engine in the same run.

Run from the repository root:

    .venv/bin/python -m bench.store_stall                    # 50,000 points, both engines
    .venv/bin/python -m bench.store_stall --points 100000 --engines edge

Each engine gets `--points` lexical-only points (the payload of `bench.access_filter`: 20,000 GitLab
project ids) in a fresh `:memory:` store opened through `app.store.engines.open_store`. A ticker task on the
same loop sleeps 2 ms at a time and records how late each wake-up is (what every other request on
the loop would wait). It runs during: `write` (the fill, in the store's own write batches), `query`
(`--queries` maximal allowed searches: `max_query_terms` = 64 terms, limit 200, under the access filter
of a reader of 2,000 projects), and `scan` (one `stored_state` of every point). Reported: the longest
stall and the 99th percentile of wake-up lateness per phase, and the median query time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from app.auth.access import Access
from app.core.access_settings import AccessSettings
from app.core.settings import QdrantSettings
from app.store import filters
from app.store.engines import open_store
from app.store.lexical import query_vector
from app.store.vectors import IndexModel
from bench.access_filter import WORDS, fill

TICK_S = 0.002


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.store_stall", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--points", type=int, default=50_000)
    parser.add_argument("--projects", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--engines", default="edge,local")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="write the results here too")
    return parser.parse_args(argv)


async def watched(work: Callable[[], Awaitable[Any]]) -> tuple[float, float, float]:
    """Run `work` while a ticker measures wake-up lateness: (seconds, max stall ms, p99 stall ms)."""
    late: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await asyncio.sleep(TICK_S)
            late.append(time.perf_counter() - start - TICK_S)

    task = asyncio.create_task(ticker())
    t0 = time.perf_counter()
    try:
        await work()
    finally:
        seconds = time.perf_counter() - t0
        done.set()
        await task
    ordered = sorted(late) or [0.0]
    return seconds, ordered[-1] * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000


async def measure(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    store = open_store(QdrantSettings(path=":memory:", collection="bench_stall", engine=engine))  # type: ignore[arg-type]
    row: dict[str, Any] = {"engine": engine, "points": args.points}
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        seconds, worst, p99 = await watched(lambda: fill(store, args.points, args.projects, rng))
        row["write"] = {"seconds": round(seconds, 1), "max_stall_ms": round(worst, 1), "p99_stall_ms": round(p99, 1)}
        reader = Access(subject="r", project_ids=frozenset(rng.sample(range(1, args.projects + 1), 2000)))
        condition = reader.condition()
        assert condition is not None, "a reader of some projects is filtered"
        where = filters.all_of(condition)
        terms = AccessSettings().max_query_terms
        times: list[float] = []

        async def queries() -> None:
            for _ in range(args.queries):
                vector = query_vector(" ".join(rng.sample(WORDS, min(terms, len(WORDS)))))
                start = time.perf_counter()
                await store.query(lexical=vector, dense=None, where=where, limit=200)
                times.append(time.perf_counter() - start)

        seconds, worst, p99 = await watched(queries)
        row["query"] = {
            "median_ms": round(statistics.median(times) * 1000, 1),
            "max_stall_ms": round(worst, 1),
            "p99_stall_ms": round(p99, 1),
        }
        seconds, worst, p99 = await watched(lambda: store.stored_state("g1/p1", None))
        row["scan"] = {"seconds": round(seconds, 2), "max_stall_ms": round(worst, 1), "p99_stall_ms": round(p99, 1)}
    finally:
        await store.close()
    return row


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rows = [asyncio.run(measure(engine, args)) for engine in args.engines.split(",") if engine]
    for row in rows:
        print(json.dumps(row))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
