"""The reconcile sweep's scope pass over many known projects: how long `lifecycle.sweep_scope` takes.

    .venv/bin/python -m bench.scope_sweep [PROJECTS]

Creates a scratch database on the local PostgreSQL (dropped at the end), fills `projects` with PROJECTS
rows (default 20,000; 1% under `attic/`), and times the sweep twice: with no deny rule (nothing leaves)
and with `deny=["attic"]` (1% leave: a sync request and a queued job each). Redis db 5, own queue.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid

import asyncpg
from pydantic import SecretStr

from app.core.settings import PostgresSettings, QdrantSettings, QueueSettings, ScopeSettings, Settings
from app.sync.lifecycle import sweep_scope
from bench.common import bench_database, redis_url
from entry.deps import open_service

REDIS = redis_url(5)
FILL = """
INSERT INTO projects (id, repo_path, requested_gen, done_gen, status)
SELECT g, CASE WHEN g % 100 = 0 THEN 'attic/p' || g ELSE 'acme/team' || (g % 50) || '/p' || g END, 1, 1, 'ok'
FROM generate_series(1, $1::int) g
"""


async def run(dsn: str, deny: tuple[str, ...], redis: str) -> tuple[int, float]:
    queue = f"javakb:bench:{uuid.uuid4().hex[:8]}"
    settings = Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis, queue=queue),
        qdrant=QdrantSettings(path=":memory:"),
        scope=ScopeSettings(deny=deny),
    )
    async with open_service(settings) as deps:
        await deps.db.ping()  # a warm pool, as in a running worker
        started = time.perf_counter()
        leaving = await sweep_scope(deps)
        seconds = time.perf_counter() - started
        await deps.queue.delete(queue)
    return leaving, seconds


async def main(projects: int, redis: str = REDIS) -> None:
    with bench_database() as dsn:
        conn = await asyncpg.connect(dsn)
        await conn.execute(FILL, projects)
        await conn.close()
        for deny in ((), ("attic",)):
            leaving, seconds = await run(dsn, deny, redis)
            print(f"{projects} projects, deny={list(deny)}: {leaving} leaving, {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000))
