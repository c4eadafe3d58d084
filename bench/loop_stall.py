"""Benchmark: how long `/healthz` takes while the embedded Qdrant writes a large sync or runs a maximal query.

Run from the repository root:

    .venv/bin/python -m bench.loop_stall                 # 20,000 points, both clients
    .venv/bin/python -m bench.loop_stall --points 5000   # a quick check

One process, one event loop, as in `javakb serve`: uvicorn serves the service's own `/healthz` handler on
loopback while the same loop drives the embedded store. A separate thread (not the loop) polls `/healthz` every
10 ms over HTTP and records each answer's latency. Two phases per client: a sync-like write (`--points` points,
a 384-dimensional dense vector and a lexical sparse vector each, upserted in batches of 64 as a sync writes
them), then `--queries` maximal hybrid-style queries (dense, limit 1,000, over every point). The clients are
qdrant-client's own local mode (`AsyncQdrantClient(location=":memory:")`, computing on the loop: before) and
ours (`app.qdrant_thread.threaded_local_client`, one dedicated thread: after), measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import threading
import time
from collections.abc import Awaitable, Callable

import httpx
import uvicorn
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm
from starlette.applications import Starlette
from starlette.routing import Route

from app.qdrant_thread import threaded_local_client
from app.web import healthz

DIM = 384
BATCH = 64
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


async def run(n: int, queries: int) -> None:
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
            ("app.qdrant_thread (after)", lambda: threaded_local_client(":memory:")),
        ]
        for name, factory in clients:
            client = factory()
            try:
                for what, r in (await measure(client, poller, n, queries)).items():
                    print(
                        f"{name:36} {what:14} {r['seconds']:7.2f} s  /healthz polls {int(r['polls']):5}  "
                        f"p50 {r['p50_ms']:8.1f} ms  max {r['max_ms']:8.1f} ms"
                    )
            finally:
                await client.close()
    finally:
        poller.stop.set()
        server.should_exit = True
        await serving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(run(args.points, args.queries))


if __name__ == "__main__":
    main()
