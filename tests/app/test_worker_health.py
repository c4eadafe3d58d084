"""The worker's `/healthz` (the probes' and KEDA's): arq's health record under a key of its own."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from pydantic import SecretStr

from app.core.settings import PostgresSettings, QdrantSettings, QueueSettings, Settings, SyncWorkerSettings
from app.jobs.queue import SYNC
from app.ops.supervisor import close_worker
from app.ops.worker_health import health_endpoint, health_key, health_report, serve_health
from app.runtime import ServiceDeps
from entry.deps import open_service
from entry.worker import build_worker

QUEUE = "javakb:health-test"


def settings_for(dsn: str, redis_url: str, name: str, port: int = 0) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue=QUEUE),
        qdrant=QdrantSettings(path=":memory:"),
        worker=SyncWorkerSettings(name=name, health_port=port),
    )


@pytest.fixture
async def deps(clean_db: str, clean_redis: str) -> AsyncIterator[ServiceDeps]:
    async with open_service(settings_for(clean_db, clean_redis, "w1")) as opened:
        yield opened


async def get(port: int, path: str = "/healthz") -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.get(f"http://127.0.0.1:{port}{path}")


async def until_recorded(redis: ArqRedis, key: str) -> None:
    async with asyncio.timeout(10):
        while await redis.get(key) is None:
            await asyncio.sleep(0.05)


def test_each_worker_has_its_own_key_so_one_live_replica_cannot_vouch_for_another() -> None:
    one, two = (settings_for("postgresql://x/y", "redis://z", name) for name in ("pod-a", "pod-b"))
    assert health_key(one) == f"{QUEUE}:health-check:pod-a"
    assert health_key(one) != health_key(two)
    assert health_key(settings_for("postgresql://x/y", "redis://z", "")).startswith(f"{QUEUE}:health-check:")


async def test_healthz_is_ok_while_the_worker_polls_and_503_once_it_stopped(
    deps: ServiceDeps, clean_db: str, clean_redis: str
) -> None:
    settings = settings_for(clean_db, "unused", "w1")
    redis = deps.queue
    await redis.enqueue_job(SYNC, 1, 1, _job_id="waiting", _defer_by=600)  # counted in `queued`
    own_pool = await create_pool(RedisSettings.from_dsn(clean_redis))  # arq's close() closes the worker's pool
    worker = build_worker(settings, replace(deps, queue=own_pool), handle_signals=False)
    assert worker.health_check_key == health_key(settings)
    report = lambda: health_report(redis, health_key(settings), QUEUE)  # noqa: E731
    server = await serve_health(report, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    running = asyncio.create_task(worker.async_run())
    try:
        await until_recorded(redis, health_key(settings))
        ok = await get(port)
        assert ok.status_code == 200
        assert ok.json()["status"] == "ok"
        assert ok.json()["queued"] >= 1  # ours, and the start-up reconcile the worker may not have taken yet
        assert "j_complete=" in ok.json()["record"]
        assert (await get(port, "/other")).status_code == 404
    finally:
        with warnings.catch_warnings():  # arq 0.28 closes its pool with redis-py's deprecated close()
            warnings.simplefilter("ignore", DeprecationWarning)
            await close_worker(worker)  # arq deletes its record, whether the start-up sweep still ran or not
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(10):
                await running
    gone = await get(port)
    server.close()
    assert gone.status_code == 503
    assert "no health record" in gone.json()["error"]


async def test_healthz_is_503_without_redis(deps: ServiceDeps) -> None:
    no_redis = ArqRedis(host="127.0.0.1", port=1)
    status, body = await health_report(no_redis, "any", QUEUE)
    assert status == 503
    assert body["error"].startswith("Redis: ")


async def test_the_endpoint_listens_on_the_configured_port_and_port_0_serves_none(
    deps: ServiceDeps, clean_db: str
) -> None:
    async with health_endpoint(settings_for(clean_db, "unused", "w1", port=0), deps.queue) as none:
        assert none is None
    probe = await serve_health(lambda: health_report(deps.queue, "k", QUEUE), "127.0.0.1", 0)
    free_port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    async with health_endpoint(settings_for(clean_db, "unused", "w1", port=free_port), deps.queue) as server:
        assert server is not None
        assert (await get(free_port)).status_code == 503  # no worker runs: nothing recorded
    with pytest.raises(httpx.ConnectError):
        await get(free_port)


async def test_a_worker_stopped_with_a_job_cancelled_in_flight_still_closes_and_deletes_its_record(
    deps: ServiceDeps, clean_db: str, clean_redis: str
) -> None:
    # On a busy machine the start-up sweep is often still running when the worker stops, and a job cancelled
    # before arq's own handler runs ends cancelled: arq's `close` then raised CancelledError (issue 27).
    settings = settings_for(clean_db, "unused", "w1")
    own_pool = await create_pool(RedisSettings.from_dsn(clean_redis))
    worker = build_worker(settings, replace(deps, queue=own_pool), handle_signals=False)
    running = asyncio.create_task(worker.async_run())
    await until_recorded(deps.queue, health_key(settings))
    worker.tasks["in-flight"] = asyncio.create_task(asyncio.Event().wait())  # a job that ends cancelled
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        await close_worker(worker)
    with contextlib.suppress(asyncio.CancelledError):
        async with asyncio.timeout(10):
            await running
    assert await deps.queue.get(health_key(settings)) is None
