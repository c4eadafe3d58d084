"""Convergence under failures: a slow GitLab with steady pushes, job ids held by dead jobs, and a
PostgreSQL outage in the middle of a sync.

Same stack as the other sync scenarios (fake GitLab over real git, real PostgreSQL/Redis/arq with
a real, non-burst worker, embedded Qdrant); every scenario ends with the audit against git.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio
from arq import Retry
from arq.constants import in_progress_key_prefix, job_key_prefix, result_key_prefix
from arq.worker import Worker

from app.core.errors import StorageError
from app.core.settings import SyncWorkerSettings
from app.core.states import SyncTrigger
from app.db import lock_key
from app.jobs.queue import enqueue_sync, sync_job_id
from entry.worker import build_worker, move_project, purge_project, sync_project
from hooks.events import parse_event
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.support.pg_outage import postgres_down

SRC = "src/main/java/com/acme/"
OUTAGE_S = 20.0  # as long as the outage seen in issue 10


def service(name: str, body: str = "return 1;") -> str:
    return (
        f"package com.acme;\n\n@Service\npublic class {name} {{\n"
        f"    public int compute(int x) {{\n        {body}\n    }}\n}}\n"
    )


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    async with sync_env(tmp_path, clean_db, clean_redis, worker=SyncWorkerSettings(max_jobs=4, files_per_batch=2)) as e:
        yield e


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 20.0) -> None:
    """Poll a condition of work running concurrently (there is no event to wait on)."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.02)


async def converged(env: SyncEnv, project: FakeProject) -> bool:
    row = await env.deps.db.project(project.id)
    return row is not None and row.indexed_sha == project.head() and row.done_gen >= row.requested_gen


@pytest_asyncio.fixture
async def worker(env: SyncEnv) -> AsyncIterator[Worker]:
    """A real (non-burst) worker running beside the test."""
    w = build_worker(env.settings, env.deps, handle_signals=False)
    task = asyncio.create_task(w.main())
    yield w
    await stop(w, task)


async def stop(w: Worker, task: asyncio.Task[None]) -> None:
    """Stop a worker as SIGTERM does (it cancels its jobs and its poll loop), and wait for it."""
    w.handle_sig(signal.SIGTERM)
    task.cancel()
    async with asyncio.timeout(30):  # a job that ignores its cancellation fails the teardown, loudly
        await asyncio.gather(task, *w.tasks.values(), return_exceptions=True)


async def test_a_slow_gitlab_with_a_push_during_every_run_converges_monotonically(env: SyncEnv, worker: Worker) -> None:
    db = env.deps.db
    env.gitlab.latency_s = 0.15  # every API call is slow, so every run is long
    project = env.gitlab.create_project("acme/shop")
    heads = [await env.push(project, {SRC + f"F{i}.java": service(f"F{i}") for i in range(8)})]
    seen_runs = 0
    for i in range(6):  # a push lands while each run is going

        async def new_run_running(after: int = seen_runs) -> bool:
            runs = await db.runs(project.id)
            return any(r["status"] == "RUNNING" and r["id"] > after for r in runs)

        await eventually(new_run_running)
        seen_runs = max(r["id"] for r in await db.runs(project.id))
        heads.append(await env.push(project, {SRC + f"F{i}.java": service(f"F{i}", f"return {i + 2};")}))
    stopped = time.monotonic()
    await eventually(lambda: converged(env, project), timeout=30)
    caught_up_s = time.monotonic() - stopped
    print(
        f"\nslow GitLab: {len(heads)} pushes, {worker.jobs_complete} jobs, caught up {caught_up_s:.1f} s after the last"
    )
    await env.audit(project)

    order = {sha: n for n, sha in enumerate(heads)}
    runs = list(reversed(await db.runs(project.id)))
    done = [r for r in runs if r["status"] == "DONE" and r["mode"] != "noop"]
    ends = [order[r["to_sha"]] for r in done]
    assert ends == sorted(ends), ends  # the index never moved back
    assert all(r["from_sha"] is None or order[r["from_sha"]] < order[r["to_sha"]] for r in done)
    assert worker.jobs_retried == 0 and worker.jobs_failed == 0  # nothing spun on the lock, nothing was lost
    assert worker.jobs_complete <= 2 * len(heads) + 2  # one job per push plus at most one hand-over each
    # After the last push: at most the run in flight and one more (each run ~1 s at this latency).
    assert caught_up_s < 10, caught_up_s
    row = await db.project(project.id)
    assert row is not None and row.status == "ok"


async def test_a_generation_whose_id_is_held_by_a_killed_job_is_still_synced(env: SyncEnv) -> None:
    # No worker yet: the push's own job is what a killed worker left behind.
    queue = env.deps.queue
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    held = sync_job_id(project.id, 1)
    # What SIGKILL leaves: the job still queued and its in-progress key alive for the job timeout + 10 s.
    await queue.psetex(in_progress_key_prefix + held, 3_600_000, b"1")
    assert await enqueue_sync(queue, project.id, 1, SyncTrigger.RECONCILE)  # not refused because of the dead id
    w = build_worker(env.settings, env.deps, handle_signals=False)
    task = asyncio.create_task(w.main())
    try:
        await eventually(lambda: converged(env, project))
    finally:
        await stop(w, task)
    await env.audit(project)
    assert await queue.zscore(env.settings.redis.queue, held) is not None  # the dead job itself never ran


async def test_a_generation_whose_id_has_a_kept_result_is_still_synced(env: SyncEnv) -> None:
    queue = env.deps.queue
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    await env.push(project, {SRC + "B.java": service("B")})
    job_id = sync_job_id(project.id, 2)
    await queue.delete(job_key_prefix + job_id)  # the job is gone (out of tries)...
    await queue.zrem(env.settings.redis.queue, job_id)
    await queue.psetex(result_key_prefix + job_id, 3_600_000, b"x")  # ...and its result is kept for an hour
    assert await enqueue_sync(queue, project.id, 2, SyncTrigger.RECONCILE)
    await env.work()
    await env.audit(project)


async def test_a_job_waiting_in_the_queue_is_not_enqueued_twice(env: SyncEnv) -> None:
    queue = env.deps.queue
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})  # queues sync:<id>:1
    assert not await enqueue_sync(queue, project.id, 1, SyncTrigger.RECONCILE)
    jobs = await queue.zrange(env.settings.redis.queue, 0, -1)
    assert [j.decode() for j in jobs] == [sync_job_id(project.id, 1)]


@pytest.mark.timeout(300)
async def test_a_postgresql_outage_during_pushes_and_a_sync_converges(
    env: SyncEnv, worker: Worker, clean_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    db = env.deps.db
    env.gitlab.latency_s = 0.05
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + f"F{i}.java": service(f"F{i}") for i in range(24)})

    async def mid_sync() -> bool:
        return len(await db.manifest(project.id)) >= 4

    await eventually(mid_sync)
    async with postgres_down(clean_db):
        # Pushes during the outage: the receiver queues them whole on Redis (replayed later).
        for i in range(3):
            sha = project.commit({SRC + f"G{i}.java": service(f"G{i}")}, f"g{i}")
            outcome, _ = await env.receiver.handle_or_defer(parse_event(push_payload(project, sha)), f"outage-{i}")
            assert outcome == "deferred"
        await asyncio.sleep(OUTAGE_S)  # the outage lasts (a real duration: PostgreSQL has no clock to inject)
    back = time.monotonic()
    # Bounded by the retry backoff (at most 64 s after a 20 s outage) plus the sync itself, which a busy
    # machine slows: 14 s on a quiet one.
    await eventually(lambda: converged(env, project), timeout=180)
    print(f"\nPostgreSQL outage of {OUTAGE_S:.0f} s: converged {time.monotonic() - back:.1f} s after it ended")
    await env.audit(project)
    # Every sync and replay job that met the outage was retried, none given up. (A sweep that fires
    # during the outage fails and simply runs again at its next interval.)
    given_up = [r.getMessage() for r in caplog.records if r.name == "arq.worker" and " failed, " in r.getMessage()]
    assert not [m for m in given_up if "cron:" not in m], given_up
    row = await db.project(project.id)
    assert row is not None and row.status == "ok" and row.last_error is None
    assert "RUNNING" not in [r["status"] for r in await db.runs(project.id)]


# -- status truth ---------------------------------------------------------------------------------


async def test_a_gitlab_outage_shows_as_failed_will_retry_within_a_second(env: SyncEnv) -> None:
    db = env.deps.db
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    env.gitlab.fail_next(1000, status=502)
    started = time.monotonic()
    with pytest.raises(Retry):  # our retry policy takes over, not python-gitlab's ~100 s of its own
        await sync_project({"deps": env.deps, "job_try": 1}, project.id)
    assert time.monotonic() - started < 3
    assert len(env.gitlab.calls) == 3  # one call and python-gitlab's two retries
    row = await db.project(project.id)
    assert row is not None and row.status == "failed"
    assert row.last_error is not None and "will retry" in row.last_error and "502" in row.last_error


async def test_a_project_with_a_push_not_indexed_yet_shows_pending_not_ok(env: SyncEnv) -> None:
    db = env.deps.db
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    await env.push(project, {SRC + "B.java": service("B")})  # its job is still queued (or lost with Redis)
    row = await db.project(project.id)
    assert row is not None and row.status == "ok" and row.behind and row.state == "pending"
    await env.work()
    row = await db.project(project.id)
    assert row is not None and not row.behind and row.state == "ok"


async def test_a_run_whose_lock_session_died_cannot_record_its_result(env: SyncEnv, clean_db: str) -> None:
    db = env.deps.db
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    async with db.project_lock(project.id) as locked:
        assert locked
        key = lock_key(project.id)
        conn = await asyncpg.connect(clean_db)
        try:  # end the lock's session only, as a PostgreSQL restart does
            ended = await conn.fetchval(
                """
                SELECT count(pg_terminate_backend(pid)) FROM pg_locks
                WHERE locktype = 'advisory' AND objsubid = 1 AND classid::bigint = $1 AND objid::bigint = $2
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """,
                (key >> 32) & 0xFFFFFFFF,  # a bigint key's high and low halves (`pg_locks` docs)
                key & 0xFFFFFFFF,
            )
        finally:
            await conn.close()
        assert ended == 1
        with pytest.raises(StorageError, match="lock is gone"):
            await db.mark_synced(project.id, project.head(), 1, "main")
    row = await db.project(project.id)
    assert row is not None and row.indexed_sha is None and row.done_gen == 0
    async with db.project_lock(project.id) as locked:  # and the lock is free again
        assert locked


async def test_lifecycle_jobs_retry_through_a_postgresql_outage(env: SyncEnv, clean_db: str) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.rename_project(project.id, "moved")
    async with postgres_down(clean_db):
        with pytest.raises(Retry):  # not a failed job: it runs again once PostgreSQL is back
            await move_project({"deps": env.deps, "job_try": 1}, project.id, "acme/moved")
        env.gitlab.delete_project(project.id)  # GitLab sends project_destroy once the project is gone
        with pytest.raises(Retry):
            await purge_project({"deps": env.deps, "job_try": 1}, project.id)
    purged = await purge_project({"deps": env.deps, "job_try": 2}, project.id)
    assert purged == f"purged project {project.id} (GitLab answers 404)"
    assert await env.points(project.id) == {} and await env.deps.db.project(project.id) is None
