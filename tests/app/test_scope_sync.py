"""The indexing scope applied end to end: receiver, sync, project_update, transfer, backfill and sweep.

Fake GitLab over real git, real PostgreSQL/Redis/arq workers, embedded Qdrant (tests/support/sync_env.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from app.core.settings import ScopeSettings
from app.jobs.queue import BACKFILL
from app.sync import lifecycle
from entry.worker import build_worker
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.app.test_sync_scenarios import SRC
from tests.support.sources import repo_service_java as service

SOURCES: dict[str, str | bytes | None] = {SRC + "A.java": service("A"), SRC + "B.java": service("B")}


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    async with sync_env(tmp_path, clean_db, clean_redis, scope=ScopeSettings(deny=("attic",))) as e:
        yield e


def update_payload(project: FakeProject) -> dict[str, Any]:
    """A `project_update` system hook (`SystemHooksService#project_data`)."""
    return {
        "event_name": "project_update",
        "project_id": project.id,
        "path_with_namespace": project.path_with_namespace,
    }


async def indexed(env: SyncEnv, path: str = "acme/shop") -> FakeProject:
    project = env.gitlab.create_project(path)
    await env.push(project, SOURCES)
    await env.work()
    await env.audit(project)
    return project


async def assert_out(env: SyncEnv, project: FakeProject, reason: str) -> None:
    row = await env.deps.db.project(project.id)
    assert row is not None and row.status == "out_of_scope", row
    assert row.last_error is not None and reason in row.last_error, row.last_error
    assert row.indexed_sha is None and row.done_gen == row.requested_gen
    assert await env.points(project.id) == {}
    assert await env.deps.db.manifest(project.id) == {}


async def test_archiving_purges_the_project_and_unarchiving_indexes_it_again(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.set_project_attributes(project.id, archived=True)
    assert await env.deliver(update_payload(project)) == "enqueued"
    await env.work()
    await assert_out(env, project, "archived")
    env.gitlab.calls.clear()
    # An archived project is read-only, but a late or forged push must not index it: the sync asks the API.
    await env.push(project, {SRC + "C.java": service("C")})
    await env.work()
    await assert_out(env, project, "archived")
    assert sync_calls(env) == [f"/api/v4/projects/{project.id}"]
    env.gitlab.set_project_attributes(project.id, archived=False)
    await env.deliver(update_payload(project))
    await env.work()
    await env.audit(project)
    row = await env.deps.db.project(project.id)
    assert row is not None and (row.status, row.last_error) == ("ok", None)


async def test_the_opt_out_topic_is_seen_by_the_next_sync_at_no_extra_gitlab_call(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.calls.clear()
    await env.push(project, {SRC + "C.java": service("C")})
    await env.work()
    calls_in_scope = len(sync_calls(env))
    env.gitlab.set_project_attributes(project.id, topics=("java", "javakb-ignore"))
    env.gitlab.calls.clear()
    await env.push(project, {SRC + "D.java": service("D")})
    await env.work()
    await assert_out(env, project, "opted out with the topic 'javakb-ignore'")
    # The topic comes with GET /projects/:id, which every sync makes anyway: one call, then nothing.
    assert len(sync_calls(env)) == 1 < calls_in_scope


async def test_forks_and_personal_projects_are_not_indexed(env: SyncEnv) -> None:
    upstream = await indexed(env)
    fork = env.gitlab.create_project("bob-team/shop")
    env.gitlab.set_project_attributes(fork.id, forked_from_id=upstream.id)
    personal = env.gitlab.create_project("alice/toy")
    env.gitlab.set_namespace_kind("alice", "user")
    await env.push(fork, SOURCES)
    await env.push(personal, SOURCES)
    await env.work()
    await assert_out(env, fork, f"a fork of project {upstream.id}")
    await assert_out(env, personal, "personal namespace")
    await env.audit(upstream)


async def test_forks_and_personal_projects_are_indexed_when_the_admin_says_so(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, scope=ScopeSettings(forks=True, personal=True)) as env:
        personal = env.gitlab.create_project("alice/toy")
        env.gitlab.set_namespace_kind("alice", "user")
        env.gitlab.set_project_attributes(personal.id, forked_from_id=99)
        await env.push(personal, SOURCES)
        await env.work()
        await env.audit(personal)


async def test_a_transfer_into_a_denied_group_purges_the_project(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.transfer_project(project.id, "attic")
    transfer = {
        "event_name": "project_transfer",
        "project_id": project.id,
        "path_with_namespace": "attic/shop",
        "old_path_with_namespace": "acme/shop",
    }
    await env.deliver(transfer)
    await env.work()
    await assert_out(env, project, "under the denied prefix 'attic'")
    row = await env.deps.db.project(project.id)
    assert row is not None and row.repo_path == "attic/shop"


async def test_a_push_out_of_scope_is_ignored_by_the_receiver_with_its_reason(env: SyncEnv) -> None:
    project = env.gitlab.create_project("attic/old")
    sha = project.commit(SOURCES, "init")
    assert await env.deliver(push_payload(project, sha), key="k1") == "ignored"
    db = env.deps.db
    assert await db.delivery_outcome("k1") == "ignored"
    rows = await db.pool.fetch("SELECT detail FROM deliveries WHERE idempotency_key = 'k1'")
    assert rows[0]["detail"] == "out of scope: under the denied prefix 'attic'"
    assert await db.project(project.id) is None
    assert await env.deps.queue.zcard(env.settings.redis.queue) == 0
    assert sync_calls(env) == []


async def test_visibility_and_repository_access_are_recorded_by_the_sync_and_by_project_update(env: SyncEnv) -> None:
    project = await indexed(env)
    db = env.deps.db
    row = await db.project(project.id)
    assert row is not None and (row.visibility, row.repository_access) == ("private", "enabled")
    env.gitlab.set_project_attributes(project.id, visibility="internal", repository_access_level="private")
    await env.deliver(update_payload(project))
    await env.work()
    row = await db.project(project.id)
    assert row is not None and (row.visibility, row.repository_access) == ("internal", "private")
    await env.audit(project)  # a visibility change does not touch the index


async def test_a_backfill_skips_projects_out_of_scope_and_purges_known_ones_that_left(env: SyncEnv) -> None:
    kept = await indexed(env, "acme/kept")
    leaving = await indexed(env, "acme/leaving")
    env.gitlab.set_project_attributes(leaving.id, topics=("javakb-ignore",))  # no hook: only a backfill sees it
    archived = env.gitlab.create_project("acme/archived")
    archived.commit(SOURCES, "init")
    env.gitlab.set_project_attributes(archived.id, archived=True)
    fresh = env.gitlab.create_project("acme/fresh")
    fresh.commit(SOURCES, "init")
    await env.deps.queue.enqueue_job(BACKFILL)
    await env.work()
    await env.audit(kept)
    await env.audit(fresh)
    await assert_out(env, leaving, "javakb-ignore")
    assert await env.deps.db.project(archived.id) is None  # never indexed, nothing recorded
    assert await env.points(archived.id) == {}
    results = await env.deps.db.backfill_projects(1)
    outcomes = {r["project_id"]: (r["outcome"], r["detail"]) for r in results}
    assert outcomes[archived.id] == ("out_of_scope", "archived (scope.archived is off)")
    assert outcomes[leaving.id][0] == "out_of_scope"
    assert outcomes[kept.id][0] == outcomes[fresh.id][0] == "requested"


async def test_the_reconcile_sweep_purges_what_a_new_deny_rule_excludes(env: SyncEnv) -> None:
    project = await indexed(env)
    other = await indexed(env, "tools/cli")
    settings = env.settings.model_copy(update={"scope": ScopeSettings(deny=("acme",))})
    deps = dataclasses.replace(env.deps, settings=settings)
    for _ in range(3):  # the sweep runs at worker start, the sync it requests right after
        await build_worker(settings, deps, burst=True, handle_signals=False).main()
    await assert_out(env, project, "under the denied prefix 'acme'")
    await env.audit(other)
    assert await lifecycle.sweep_scope(deps) == 0  # a project marked out of scope is not asked for again


async def test_a_project_moved_back_out_of_a_denied_group_is_indexed_again(env: SyncEnv) -> None:
    project = await indexed(env)
    for namespace, old in (("attic", "acme/shop"), ("attic/deeper", "attic/shop"), ("acme", "attic/deeper/shop")):
        env.gitlab.transfer_project(project.id, namespace)
        await env.deliver(
            {
                "event_name": "project_transfer",
                "project_id": project.id,
                "path_with_namespace": project.path_with_namespace,
                "old_path_with_namespace": old,
            }
        )
        await env.work()
        row = await env.deps.db.project(project.id)
        assert row is not None and row.repo_path == project.path_with_namespace
    await env.audit(project)  # back at acme/shop, fully indexed again


async def test_a_project_marked_for_deletion_leaves_scope_on_its_update(env: SyncEnv) -> None:
    project = await indexed(env)
    env.gitlab.set_project_attributes(project.id, marked_for_deletion_on="2026-12-08")
    await env.deliver(update_payload(project))
    await env.work()
    await assert_out(env, project, "marked for deletion on 2026-12-08")


def sync_calls(env: SyncEnv) -> list[str]:
    """GitLab calls other than the reconcile sweep's project listing, which every worker start makes."""
    return [path for _, path in env.gitlab.calls if path != "/api/v4/projects"]
