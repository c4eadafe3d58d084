"""Lifecycle events are confirmed with the GitLab API, and their jobs retry transient failures (issue 9).

A forged `project_destroy` / `project_rename` for a live project changes nothing; `purge_project`,
`move_project` and `refresh_project` turn GitLab, Qdrant, PostgreSQL and lock failures into arq `Retry`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from arq import Retry
from qdrant_client import AsyncQdrantClient

from app.gitlab.client import META_RETRIES
from app.runtime import Deps
from app.store.vectors import VectorStore
from entry.worker import move_project, purge_project, refresh_project
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv
from tests.app.test_scope_sync import indexed
from tests.support.pg_outage import postgres_down

UNUSED_PORT = 1  # nothing listens there: a Qdrant server that is down


def destroy(project: FakeProject, path: str | None = None) -> dict[str, Any]:
    return {
        "event_name": "project_destroy",
        "project_id": project.id,
        "path_with_namespace": path or project.path_with_namespace,
    }


def rename(project: FakeProject, new_path: str, old_path: str) -> dict[str, Any]:
    return {
        "event_name": "project_rename",
        "project_id": project.id,
        "path_with_namespace": new_path,
        "old_path_with_namespace": old_path,
    }


def ctx(deps: Deps, job_try: int = 1) -> dict[str, Any]:
    """What arq hands a job function."""
    return {"deps": deps, "job_try": job_try, "job_id": "test"}


def gitlab_down(env: SyncEnv, project: FakeProject) -> None:
    # As many 503s as one call's attempts (`META_RETRIES` + 1); `Retry-After: 0` keeps the waits at zero.
    env.gitlab.fail_next(META_RETRIES + 1, status=503, retry_after="0", path_contains=f"/projects/{project.id}")


@asynccontextmanager
async def qdrant_down(deps: Deps) -> AsyncIterator[Deps]:
    """The same resources, but a Qdrant server that does not answer."""
    client = AsyncQdrantClient(url=f"http://127.0.0.1:{UNUSED_PORT}", timeout=1, check_compatibility=False)
    try:
        yield dataclasses.replace(deps, store=VectorStore(client, deps.settings.qdrant.collection, server=True))
    finally:
        await client.close()


# -- confirmation -----------------------------------------------------------------------------------


async def test_a_forged_destroy_of_a_live_project_changes_nothing(env: SyncEnv) -> None:
    project = await indexed(env)
    before = await env.points(project.id)
    assert await env.deliver(destroy(project)) == "enqueued"
    await env.work()
    assert await env.points(project.id) == before
    await env.audit(project)
    assert await purge_project(ctx(env.deps), project.id) == f"project {project.id} still exists on GitLab: not purged"


async def test_a_project_marked_for_deletion_is_purged_on_destroy(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.set_project_attributes(project.id, marked_for_deletion_on="2026-12-08")
    await env.deliver(destroy(project))
    await env.work()
    assert await env.points(project.id) == {}
    assert await env.deps.db.project(project.id) is None


async def test_a_forged_rename_does_not_move_the_points(env: SyncEnv) -> None:
    project = await indexed(env)
    assert await env.deliver(rename(project, "evil/elsewhere", "acme/shop")) == "enqueued"
    await env.work()
    assert {p["repo_path"] for p in (await env.points(project.id)).values()} == {"acme/shop"}
    await env.audit(project)


async def test_a_rename_follows_the_path_gitlab_reports_not_the_payload(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.rename_project(project.id, "store")
    await env.deliver(rename(project, "evil/elsewhere", "acme/shop"))
    await env.work()
    assert {p["repo_path"] for p in (await env.points(project.id)).values()} == {"acme/store"}
    await env.audit(project)


async def test_a_rename_of_a_project_gone_from_gitlab_purges_it(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.delete_project(project.id)
    assert (
        await move_project(ctx(env.deps), project.id, "acme/store")
        == f"purged project {project.id} (GitLab answers 404)"
    )
    assert await env.points(project.id) == {}


# -- transient failures become retries --------------------------------------------------------------


async def test_a_purge_retries_while_gitlab_is_unavailable(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.delete_project(project.id)
    gitlab_down(env, project)
    with pytest.raises(Retry):
        await purge_project(ctx(env.deps), project.id)
    assert await env.points(project.id) != {}  # not confirmed yet: nothing purged
    assert await purge_project(ctx(env.deps, 2), project.id) == f"purged project {project.id} (GitLab answers 404)"
    assert await env.points(project.id) == {}
    assert await env.deps.db.project(project.id) is None


async def test_a_purge_retries_while_qdrant_is_down(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.delete_project(project.id)
    async with qdrant_down(env.deps) as down:
        with pytest.raises(Retry):
            await purge_project(ctx(down), project.id)
    assert await env.deps.db.project(project.id) is not None  # state stays until the points are gone
    await purge_project(ctx(env.deps, 2), project.id)
    assert await env.points(project.id) == {}


async def test_a_purge_retries_while_postgresql_is_down(env: SyncEnv, clean_db: str) -> None:
    project = await indexed(env)
    env.gitlab.delete_project(project.id)
    async with postgres_down(clean_db):
        with pytest.raises(Retry):
            await purge_project(ctx(env.deps), project.id)
    assert await env.points(project.id) != {}
    await purge_project(ctx(env.deps, 2), project.id)
    assert await env.points(project.id) == {}
    assert await env.deps.db.project(project.id) is None


async def test_a_purge_retries_while_a_sync_holds_the_project(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.delete_project(project.id)
    async with env.deps.db.project_lock(project.id) as locked:
        assert locked
        with pytest.raises(Retry):
            await purge_project(ctx(env.deps), project.id)
    assert await env.points(project.id) != {}
    await purge_project(ctx(env.deps, 2), project.id)
    assert await env.points(project.id) == {}


async def test_the_worker_retries_a_purge_until_it_is_done(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.delete_project(project.id)
    gitlab_down(env, project)
    await env.deliver(destroy(project))
    await env.work()  # the first try raises Retry (deferred 1 s); a later burst runs it again
    assert await env.points(project.id) == {}
    assert await env.deps.db.project(project.id) is None


async def test_a_move_retries_while_gitlab_or_qdrant_is_down(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.rename_project(project.id, "store")
    gitlab_down(env, project)
    with pytest.raises(Retry):
        await move_project(ctx(env.deps), project.id, "acme/store")
    async with qdrant_down(env.deps) as down:
        with pytest.raises(Retry):
            await move_project(ctx(down), project.id, "acme/store")
    row = await env.deps.db.project(project.id)
    assert row is not None and row.repo_path == "acme/shop"  # the state moves only after the points
    assert await move_project(ctx(env.deps, 3), project.id, "acme/store") == f"project {project.id} is now acme/store"
    assert {p["repo_path"] for p in (await env.points(project.id)).values()} == {"acme/store"}


async def test_a_move_retries_while_postgresql_is_down(env: SyncEnv, clean_db: str) -> None:
    project = await indexed(env)
    env.gitlab.rename_project(project.id, "store")
    async with postgres_down(clean_db):
        with pytest.raises(Retry):
            await move_project(ctx(env.deps), project.id, "acme/store")
    await move_project(ctx(env.deps, 2), project.id, "acme/store")
    await env.audit(project)


async def test_a_refresh_retries_while_gitlab_is_unavailable(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.set_project_attributes(project.id, visibility="public")
    gitlab_down(env, project)
    with pytest.raises(Retry):
        await refresh_project(ctx(env.deps), project.id)
    assert await refresh_project(ctx(env.deps, 2), project.id) == "default branch unchanged"
    row = await env.deps.db.project(project.id)
    assert row is not None and row.visibility == "public"


async def test_events_for_projects_never_indexed_create_nothing_out_of_scope(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    assert await move_project(ctx(env.deps), project.id, "acme/shop") == f"project {project.id} is not indexed"
    env.gitlab.set_project_attributes(project.id, archived=True)
    message = await refresh_project(ctx(env.deps), project.id)
    assert message == f"project {project.id} is out of scope: archived (scope.archived is off)"
    assert await env.deps.db.project(project.id) is None
    assert await env.deps.queue.zcard(env.settings.redis.queue) == 0
