"""Benchmark: how long `/healthz` takes while the embedded Qdrant writes a large sync or runs a maximal query.

Run from the repository root:

    .venv/bin/python -m bench.loop_stall                 # 20,000 points, both clients
    .venv/bin/python -m bench.loop_stall --points 5000   # a quick check
    .venv/bin/python -m bench.loop_stall --points 100000 --edge-only   # Edge alone at 100k

One process, one event loop, as in `javakb serve`: uvicorn serves the service's own `/healthz` handler on
loopback while the same loop drives the embedded store. A separate thread (not the loop) polls `/healthz` every
10 ms over HTTP and records each answer's latency. Two phases per client: a sync-like write (`--points` points,
a 384-dimensional dense vector and a lexical sparse vector each, upserted in batches of 64 as a sync writes
them), then `--queries` maximal hybrid-style queries (dense, limit 1,000, over every point). The clients are
qdrant-client's own local mode (`AsyncQdrantClient(location=":memory:")`, computing on the loop: before) and
ours (`app.store.qdrant_thread.threaded_local_client`, one dedicated thread: after), measured in the same run;
then the same two phases through the `Store` protocol, as the service calls it, on local mode (behind
`qdrant_thread`) and on Qdrant Edge (the default engine), with a hybrid maximal query (`measure_store`).

`--sync FILES` adds the whole sync: the stack of `testkit/sync_env.py` (fake GitLab over real git,
PostgreSQL in a database made for the run and dropped after, Redis at `--redis`, a real arq worker, lexical-only)
syncs a push of FILES Java files into embedded Qdrant while `/healthz` is polled the same way, once with each
client (a fresh database and fake GitLab each time).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import uvicorn
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm
from starlette.applications import Starlette
from starlette.routing import Route

from app.core.access_settings import AccessSettings
from app.search.service import SearchService
from app.store.edge import EdgeStore
from app.store.engines import Store
from app.store.indexing import Indexer
from app.store.lexical import SparseVector
from app.store.qdrant_thread import threaded_local_client
from app.store.vectors import IndexModel, VectorStore
from bench.common import PG_SERVER, bench_database
from entry.web import healthz
from testkit.sync_env import SyncEnv, sync_env

DIM = 384
BATCH = 64
QUERY_TERMS = 3 * AccessSettings().max_query_terms  # three lexical terms (word, stem, a part) per allowed word
PORT = 18_731


class Poller(threading.Thread):
    """Polls `/healthz` from its own thread and keeps every latency (seconds)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.latencies: list[float] = []
        self.running = threading.Event()
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=120) as client:
            while not self.stop.is_set():
                if self.running.is_set():
                    started = time.perf_counter()
                    client.get(self.url).raise_for_status()
                    self.latencies.append(time.perf_counter() - started)
                self.stop.wait(0.01)


def make_points(n: int, rng: random.Random) -> list[qm.PointStruct]:
    return [
        qm.PointStruct(
            id=i,
            vector={
                "dense": [rng.random() for _ in range(DIM)],
                "lexical": qm.SparseVector(indices=sorted(rng.sample(range(50_000), 40)), values=[1.0] * 40),
            },
            payload={"repo_path": "bench/repo", "file_path": f"F{i // 10}.java", "n": i},
        )
        for i in range(n)
    ]


async def phase(poller: Poller, work: Callable[[], Awaitable[None]]) -> dict[str, float]:
    poller.latencies.clear()
    poller.running.set()
    started = time.perf_counter()
    await work()
    seconds = time.perf_counter() - started
    poller.running.clear()
    await asyncio.sleep(0.05)
    lat = poller.latencies or [0.0]
    return {"seconds": seconds, "polls": len(lat), "p50_ms": statistics.median(lat) * 1e3, "max_ms": max(lat) * 1e3}


async def measure(client: AsyncQdrantClient, poller: Poller, n: int, queries: int) -> dict[str, dict[str, float]]:
    rng = random.Random(7)
    points = make_points(n, rng)
    await client.create_collection(
        "code",
        vectors_config={"dense": qm.VectorParams(size=DIM, distance=qm.Distance.COSINE)},
        sparse_vectors_config={"lexical": qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
    )

    async def write() -> None:
        for start in range(0, n, BATCH):
            await client.upsert("code", points[start : start + BATCH])

    async def query() -> None:
        for _ in range(queries):
            vector = [rng.random() for _ in range(DIM)]
            await client.query_points("code", query=vector, using="dense", limit=1000, with_payload=True)

    return {"sync write": await phase(poller, write), "maximal query": await phase(poller, query)}


async def measure_store(store: Store, poller: Poller, n: int, queries: int) -> dict[str, dict[str, float]]:
    """The same two phases through the `Store` protocol (either embedded engine, as the service calls it).

    The query is hybrid: the dense vector and a lexical vector of `QUERY_TERMS` terms, limit 1,000.
    """
    rng = random.Random(7)
    points = [p.model_copy(update={"id": str(uuid.UUID(int=int(p.id)))}) for p in make_points(n, rng)]
    await store.ensure(IndexModel(embedding_model="bench", dimension=DIM))

    async def write() -> None:
        for start in range(0, n, BATCH):
            await store.upsert(points[start : start + BATCH])

    async def query() -> None:
        terms = sorted(rng.sample(range(50_000), QUERY_TERMS))
        for _ in range(queries):
            dense = [rng.random() for _ in range(DIM)]
            lexical = SparseVector(indices=tuple(terms), values=tuple(1.0 for _ in terms))
            await store.query(lexical=lexical, dense=dense, where=None, limit=1000)

    return {"sync write": await phase(poller, write), "maximal query": await phase(poller, query)}


def java_file(i: int) -> str:
    methods = "\n".join(f"    public int m{j}(int x) {{ return repo.find(x + {j}) * {i}; }}" for j in range(8))
    return f"package com.acme.s{i % 20};\n\n@Service\npublic class S{i} {{\n    private Repo repo;\n{methods}\n}}\n"


async def measure_sync(
    client: AsyncQdrantClient, poller: Poller, files: int, pg_server: str, redis_url: str
) -> dict[str, float]:
    """Sync a push of `files` files with `client` as the store; `/healthz` latency meanwhile."""
    with bench_database(pg_server) as dsn, tempfile.TemporaryDirectory() as tmp:
        async with sync_env(Path(tmp), dsn, redis_url) as env:
            store = VectorStore(client, env.settings.qdrant.collection)
            await store.ensure(await env.deps.index_model())
            deps = dataclasses.replace(
                env.deps, store=store, indexer=Indexer(store, None), search=SearchService(store, None, None)
            )
            bench_env = SyncEnv(deps=deps, settings=env.settings, gitlab=env.gitlab)
            project = env.gitlab.create_project("bench/big")
            sources: dict[str, str | bytes | None] = {
                f"src/main/java/com/acme/S{i}.java": java_file(i) for i in range(files)
            }
            await bench_env.push(project, sources)
            return await phase(poller, bench_env.work)


def report(name: str, results: dict[str, dict[str, float]]) -> None:
    for what, r in results.items():
        print(
            f"{name:36} {what:16} {r['seconds']:7.2f} s  /healthz polls {int(r['polls']):5}  "
            f"p50 {r['p50_ms']:8.1f} ms  max {r['max_ms']:8.1f} ms",
            flush=True,
        )


async def run(
    n: int, queries: int, sync_files: int = 0, pg_server: str = "", redis_url: str = "", *, edge_only: bool = False
) -> None:
    server = uvicorn.Server(
        uvicorn.Config(Starlette(routes=[Route("/healthz", healthz)]), port=PORT, log_level="warning")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    poller = Poller(f"http://127.0.0.1:{PORT}/healthz")
    poller.start()
    try:
        clients: list[tuple[str, Callable[[], AsyncQdrantClient]]] = [
            ("qdrant-client local mode (before)", lambda: AsyncQdrantClient(location=":memory:")),
            ("app.store.qdrant_thread (after)", lambda: threaded_local_client(":memory:")),
        ]
        for name, factory in [] if edge_only else clients:
            client = factory()
            try:
                results = await measure(client, poller, n, queries)
            finally:
                await client.close()
            if sync_files:
                client = factory()
                try:
                    results[f"sync {sync_files} files"] = await measure_sync(
                        client, poller, sync_files, pg_server, redis_url
                    )
                finally:
                    await client.close()
            report(name, results)
        stores: list[tuple[str, Callable[[], Store]]] = [
            ("Store: qdrant_thread local mode", lambda: VectorStore(threaded_local_client(":memory:"), "code")),
            ("Store: Qdrant Edge (the default)", lambda: EdgeStore(":memory:", "code")),
        ]
        for name, make in stores[-1:] if edge_only else stores:
            store = make()
            try:
                report(name, await measure_store(store, poller, n, queries))
            finally:
                await store.close()
    finally:
        poller.stop.set()
        server.should_exit = True
        await serving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--sync", type=int, default=0, metavar="FILES", help="also time a sync of FILES files")
    parser.add_argument("--postgres", default=PG_SERVER, help="server URL, no database")
    parser.add_argument("--redis", default="", help="a Redis database of your own (never db 0), for --sync")
    parser.add_argument(
        "--edge-only",
        action="store_true",
        help="only the Store on Qdrant Edge (local mode takes minutes a query at 100,000 points)",
    )
    args = parser.parse_args()
    if args.sync and not args.redis:
        parser.error("--sync needs --redis redis://HOST:PORT/DB")
    asyncio.run(run(args.points, args.queries, args.sync, args.postgres, args.redis, edge_only=args.edge_only))


if __name__ == "__main__":
    main()
