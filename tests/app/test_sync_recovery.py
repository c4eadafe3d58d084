"""Sync scenarios of recovery and operations: the reconcile sweep, refused tokens, the admin backfill,
a timed-out sync and a lock held by another job.

Same stack as `test_sync_more.py`: fake GitLab over real git, real PostgreSQL/Redis/arq, embedded Qdrant.
"""

from __future__ import annotations

from pathlib import Path

from app.core.events import GitLabEvent
from app.core.settings import (
    SyncWorkerSettings,
)
from app.jobs.queue import BACKFILL
from app.sync.sweep import DISCOVERED
from hooks.events import SyncRequested
from testkit.sync_env import SyncEnv, sync_env
from tests.app.test_sync_more import (
    SRC,
    last_run,
)
from tests.support.sources import repo_service_java as service

LISTING = "/api/v4/projects"  # the sweep's listing of every project


def beyond_the_sweeps(calls: list[tuple[str, str]]) -> int:
    """The project calls beyond one per sweep (each sweep lists the projects once, then may try each behind once).

    How many sweeps run is not fixed: `SyncEnv.work` starts another burst worker, which sweeps at its start,
    whenever the queue was not empty when the last one returned, which depends on the machine's load. Counted
    against the sweeps' own listings, a retry loop still shows, however many workers the load made it start.
    """
    listings = sum(path == LISTING for _, path in calls)
    return sum(path != LISTING for _, path in calls) - listings


async def test_the_reconcile_sweep_syncs_a_delivery_whose_nudge_was_lost(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    sha = project.commit({SRC + "A.java": service("A")}, "a")
    push = SyncRequested(
        event=GitLabEvent.PUSH,
        project_id=project.id,
        repo_path=project.path_with_namespace,
        default_branch="main",
        ref="refs/heads/main",
        after=sha,
    )
    assert await env.deps.db.record_sync_deliveries([("lost-nudge", push)]) == [1]
    assert await env.deps.queue.zcard(env.settings.redis.queue) == 0  # nothing was enqueued
    await env.work()  # the reconcile cron runs at the worker's start
    await env.audit(project)
    run = await last_run(env, project)
    assert (run["trigger"], run["status"]) == ("reconcile", "DONE")


async def test_a_refused_token_fails_once_and_keeps_the_previous_index(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    indexed = await env.points(project.id)
    before = await env.deps.db.project(project.id)
    await env.push(project, {SRC + "B.java": service("B")})
    env.gitlab.fail_next(1000, status=401)
    calls = len(env.gitlab.calls)
    await env.work()
    assert beyond_the_sweeps(env.gitlab.calls[calls:]) <= 1  # no retry loop against a token GitLab refuses
    row = await env.deps.db.project(project.id)
    assert row is not None and before is not None
    assert row.status == "failed" and row.last_error is not None and "token" in row.last_error
    assert row.indexed_sha == before.indexed_sha
    assert await env.points(project.id) == indexed


async def test_a_wrong_token_fails_a_first_sync(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, gitlab_token="glpat-wrong") as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + "A.java": service("A")})
        await env.work()
        assert beyond_the_sweeps(env.gitlab.calls) <= 1  # one attempt: a refused token is not retried by the job
        await env.work()  # each worker start's sweep tries what is behind again, once: no retry loop
        assert beyond_the_sweeps(env.gitlab.calls) <= 1
        row = await env.deps.db.project(project.id)
        assert row is not None and row.status == "failed" and row.last_error is not None
        assert "token" in row.last_error and row.indexed_sha is None
        assert await env.points(project.id) == {}


async def synced_by_the_sweep(env: SyncEnv, project_id: int) -> bool:
    """The project's one sync came from the sweep: queued by it, or by the backfill it opens for its discoveries.

    Which of the two depends on whether the admin's backfill had listed its projects when the worker's first sweep
    ran (both jobs run at once): if not, the sweep finds more new projects than a backfill's slots and leaves them
    to a backfill of its own (`app.sync.sweep.leave_to_backfill`).
    """
    db = env.deps.db
    triggers = [r["trigger"] for r in await db.runs(project_id)]
    if triggers != ["backfill"]:
        return triggers == ["reconcile"]
    opened = [b["id"] for b in await db.backfills_page(None, 0, 100) if DISCOVERED in (b["target"] or {})]
    listed = [p["project_id"] for b in opened for p in await db.backfill_projects(b)]
    return project_id in listed


async def test_backfill_of_listed_and_of_all_projects(env: SyncEnv) -> None:
    projects = [env.gitlab.create_project(f"acme/p{i}") for i in range(3)]
    for i, project in enumerate(projects):
        project.commit({SRC + f"P{i}.java": service(f"P{i}"), SRC + "Common.java": service("Common")}, "init")
    empty = env.gitlab.create_project("acme/empty")
    queue = env.deps.queue

    await queue.enqueue_job(BACKFILL, [projects[0].id, projects[1].id])
    await env.work()
    for project in projects[:2]:
        await env.audit(project)
    # Not backfilled: the worker's reconcile sweep discovered it in GitLab's listing.
    assert await synced_by_the_sweep(env, projects[2].id)

    await queue.enqueue_job(BACKFILL)
    await env.work()
    for project in projects:
        await env.audit(project)
    row = await env.deps.db.project(empty.id)
    assert row is not None and (row.status, row.indexed_sha) == ("ok", None)
    assert await env.points(empty.id) == {}
    assert [len(await env.runs(p.id)) for p in projects] == [1, 1, 1]


RETRIES = 20
"""More failed fetches than the syncs one burst of the worker can run."""


async def test_a_sync_that_times_out_is_recorded_as_failed(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    # Production settings keep `job_timeout_s` at 10 s or more; one second keeps this test short.
    fields = SyncWorkerSettings(files_per_batch=1).model_dump() | {"job_timeout_s": 1}
    async with sync_env(tmp_path, clean_db, clean_redis, worker=SyncWorkerSettings.model_construct(**fields)) as env:
        db = env.deps.db
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + f"F{i}.java": service(f"F{i}") for i in range(4)})
        # Every fetch walks the tree instead of the archive, and python-gitlab waits 2 s at the tree: every
        # sync times out, the push's and any the reconcile sweep enqueues for the failed project (on a busy
        # machine the sweep runs after the push's job failed and retries it within the same burst).
        env.gitlab.fail_next(RETRIES, status=500, path_contains="/archive")
        env.gitlab.fail_next(RETRIES, status=503, retry_after="2", path_contains="/tree")
        await env.work()  # arq cancels the job after a second and does not retry a timeout
        row = await db.project(project.id)
        assert row is not None and row.indexed_sha is None
        assert row.status == "failed" and row.last_error is not None, (row.status, row.last_error)
        statuses = [r["status"] for r in await db.runs(project.id)]
        assert statuses and set(statuses) == {"FAILED"}, statuses


async def test_a_push_whose_job_found_the_lock_held_by_a_lifecycle_or_rebuild_job_is_synced_when_it_lets_go(
    env: SyncEnv,
) -> None:
    # A sync job that finds the project's lock taken returns at once; every holder must look again when it
    # lets go. A model rebuild's project job did not, so a push during it waited for the next sweep.
    from app.sync.lifecycle import held

    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    queue = env.deps.queue
    async with held(env.deps, project.id):  # as `rebuild_project` and the lifecycle jobs hold it
        head = await env.push(project, {SRC + "B.java": service("B")})
        await env.work()  # the push's job: busy, returns without a retry
        row = await env.deps.db.project(project.id)
        assert row is not None and row.behind and row.indexed_sha != head
        assert await queue.zcard(env.settings.redis.queue) == 0
    assert await queue.zcard(env.settings.redis.queue) == 1  # handed over when the lock was let go
    await env.work()
    await env.audit(project)
