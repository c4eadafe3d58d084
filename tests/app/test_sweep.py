"""The reconcile sweep heals what no delivery told us: lost pushes, new projects, missed renames,
transfers and default-branch changes; and it costs about one GitLab call per 100 projects.

GitLab's clock is injected into the fake (`Clock`): GitLab moves `last_activity_at` on a push only when
it is over an hour old, so tests put a project's past activity hours back instead of sleeping.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app.core.settings import ScopeSettings, SyncWorkerSettings, cron_fields
from app.db import HeadSeen, SweepMarks
from app.gitlab.client import Activity, ProjectInfo
from app.sync.sweep import THROTTLE, believable, confirm_unlisted, listing_cutoff, may_have_moved, plan_sweep, sweep
from entry.worker import build_worker, reconcile
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.support.sources import service_java as service

SRC = "src/main/java/com/acme/"
LISTING = "/api/v4/projects"


class Clock:
    """GitLab's clock in the fake: real time shifted by `offset` (negative: the past)."""

    def __init__(self, offset: timedelta = timedelta()) -> None:
        self.offset = offset

    def __call__(self) -> datetime:
        return datetime.now(tz=UTC) + self.offset


async def sweep_calls(env: SyncEnv) -> list[str]:
    """Run one reconcile sweep; return the GitLab paths it asked for."""
    before = len(env.gitlab.calls)
    await reconcile({"deps": env.deps})
    return [path for _, path in env.gitlab.calls[before:]]


async def test_a_push_whose_every_delivery_was_lost_is_healed(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    clock = Clock(-3 * THROTTLE)
    async with sync_env(tmp_path, clean_db, clean_redis, gitlab_clock=clock) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + "A.java": service("A")})
        await env.work()
        clock.offset = timedelta()  # three hours later: the push moves last_activity_at
        project.commit({SRC + "B.java": service("B")}, "lost push")
        assert await sweep_calls(env) == [LISTING, f"/api/v4/projects/{project.id}/repository/branches/main"]
        await env.work()
        await env.audit(project)


async def test_a_lost_push_inside_gitlabs_activity_throttle_is_healed(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    active = env.gitlab.snapshot(str(project.id))
    project.commit({SRC + "B.java": service("B")}, "lost push")
    after = env.gitlab.snapshot(str(project.id))
    assert active is not None and after is not None
    assert after.last_activity_at == active.last_activity_at  # GitLab did not record this push's activity
    await reconcile({"deps": env.deps})
    await env.work()
    await env.audit(project)


async def test_a_new_project_is_discovered_without_a_push(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/new")
    project.commit({SRC + "A.java": service("A")}, "first commit, hook lost")
    await reconcile({"deps": env.deps})
    await env.work()
    await env.audit(project)


async def test_when_nothing_changed_a_sweep_is_one_call(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, gitlab_clock=Clock(-3 * THROTTLE)) as env:
        projects = [env.gitlab.create_project(f"acme/p{i}") for i in range(101)]  # empty: nothing to index
        first = await sweep_calls(env)
        assert first == [LISTING, LISTING]  # the first sweep lists every project: 100 a page, a short one ends
        await env.work()
        assert {(await env.deps.db.project(p.id)) is not None for p in projects} == {True}
        assert await sweep_calls(env) == [LISTING]  # only projects active in the last hour are listed


async def test_a_missed_rename_followed_by_a_push_moves_the_project_first(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    with FakeEmbeddingServer(dim=16) as embedder:
        async with sync_env(tmp_path, clean_db, clean_redis, embedding_url=embedder.base_url) as env:
            project = env.gitlab.create_project("acme/shop")
            await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B")})
            await env.work()
            sent = embedder.inputs_total
            env.gitlab.rename_project(project.id, "store")  # the project_rename hook is lost
            await env.push(project, {SRC + "C.java": service("C")})  # announces the new path
            await env.work()
            await env.audit(project, gone_paths=["acme/shop"])
            assert embedder.inputs_total - sent == 2  # only C's chunks (type and method) were embedded


@pytest.mark.parametrize("change", ["rename", "transfer"])
async def test_a_missed_rename_or_transfer_is_found_by_the_sweep(
    tmp_path: Path, clean_db: str, clean_redis: str, change: str
) -> None:
    worker = SyncWorkerSettings(max_jobs=4, files_per_batch=8, full_sweep_every_s=0)
    async with sync_env(tmp_path, clean_db, clean_redis, worker=worker) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + "A.java": service("A")})
        await env.work()
        if change == "rename":
            env.gitlab.rename_project(project.id, "store")
        else:
            env.gitlab.transfer_project(project.id, "platform/team")
        await reconcile({"deps": env.deps})
        await env.work()
        await env.audit(project, gone_paths=["acme/shop"])
        assert [r["mode"] for r in await env.runs(project.id)] == ["archive"]  # moved, nothing re-indexed


async def test_a_missed_default_branch_change_is_found_by_the_sweep(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    worker = SyncWorkerSettings(max_jobs=4, files_per_batch=8, full_sweep_every_s=0)
    async with sync_env(tmp_path, clean_db, clean_redis, worker=worker) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + "A.java": service("A")})
        await env.work()
        project.create_branch("develop", project.head())
        project.commit({SRC + "D.java": service("D"), SRC + "A.java": None}, "develop work", branch="develop")
        env.gitlab.set_default_branch(project.id, "develop")  # the project_update hook is lost
        await reconcile({"deps": env.deps})
        await env.work()
        await env.audit(project)
        row = await env.deps.db.project(project.id)
        assert row is not None and row.default_branch == "develop"


async def test_a_sweep_during_a_gitlab_outage_fails_quietly_and_the_next_one_heals(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    project.commit({SRC + "B.java": service("B")}, "lost push")
    env.gitlab.fail_next(3, 503, path_contains=LISTING)  # the listing's attempts (META_RETRIES + 1)
    assert "sweep failed" in await reconcile({"deps": env.deps})
    await reconcile({"deps": env.deps})
    await env.work()
    await env.audit(project)


# -- pure rules ---------------------------------------------------------------------------------------

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def activity(project_id: int, at: datetime, path: str = "acme/p", branch: str = "main") -> Activity:
    info = ProjectInfo(id=project_id, path_with_namespace=path, default_branch=branch, empty=False)
    return Activity(project=info, last_activity_at=at)


def seen(project_id: int, checked: datetime | None, **changes: Any) -> HeadSeen:
    fields: dict[str, Any] = {
        "id": project_id, "repo_path": "acme/p", "default_branch": "main", "indexed_sha": "a" * 40,
        "head_checked_at": checked, "behind": False, "out_of_scope": False,
    }  # fmt: skip
    return HeadSeen(**(fields | changes))


def test_a_project_may_have_moved_until_an_hour_after_the_check_that_followed_its_activity() -> None:
    assert may_have_moved(NOW - timedelta(minutes=30), NOW)  # a later push may not have moved the activity
    assert not may_have_moved(NOW - 2 * THROTTLE, NOW)  # a later push would have moved it
    assert may_have_moved(NOW - 2 * THROTTLE, None)


def test_the_listing_starts_an_hour_before_the_last_one_and_is_full_when_due() -> None:
    every = timedelta(hours=1)
    assert listing_cutoff(SweepMarks(now=NOW, listed_at=None, full_at=None), every) is None
    marks = SweepMarks(now=NOW, listed_at=NOW - timedelta(minutes=5), full_at=NOW - timedelta(minutes=30))
    cutoff = listing_cutoff(marks, every)
    assert cutoff is not None and cutoff <= NOW - timedelta(minutes=5) - THROTTLE
    assert listing_cutoff(SweepMarks(now=NOW, listed_at=NOW, full_at=NOW - every), every) is None


def test_plan_sweep_sorts_listed_projects() -> None:
    old = NOW - 3 * THROTTLE
    listed = [
        activity(1, old),  # unknown: discovered
        activity(2, old, path="acme/renamed"),
        activity(3, old, branch="develop"),
        activity(4, NOW - timedelta(minutes=10)),  # active after its check window: ask its head
        activity(5, old),  # quiet since long before its last check: nothing to ask
        activity(6, NOW),  # deliveries pending: the PostgreSQL half of the sweep has it
    ]
    known = {i: seen(i, NOW - timedelta(minutes=1)) for i in (2, 3, 4, 5)} | {6: seen(6, None, behind=True)}
    plan = plan_sweep(listed, known, ScopeSettings())
    assert [(d.project.id, d.reason, d.full) for d in plan.sync] == [
        (1, "discovered", False),
        (2, "moved", False),
        (3, "default branch changed", True),
    ]
    assert [a.project.id for a in plan.check] == [4]


def test_plan_sweep_applies_the_indexing_scope() -> None:
    old = NOW - 3 * THROTTLE
    forked = Activity(project=dataclasses.replace(activity(1, old).project, forked_from_id=9), last_activity_at=old)
    listed = [forked, activity(2, old, path="denied/p"), activity(3, old), activity(4, old, path="denied/q")]
    known = {3: seen(3, NOW, out_of_scope=True), 4: seen(4, NOW, repo_path="denied/q", out_of_scope=True)}
    known[2] = seen(2, NOW, repo_path="denied/p")
    plan = plan_sweep(listed, known, ScopeSettings(deny=("denied",)))
    # A fork is not discovered; a known project under a new deny rule leaves; one back in scope returns;
    # one still out of scope is left alone.
    assert [(d.project.id, d.reason) for d in plan.sync] == [(2, "left scope"), (3, "back in scope")]
    assert plan.check == ()


@pytest.mark.parametrize(
    ("every", "fields"), [(30, {"second": {0, 30}}), (600, {"second": {0}, "minute": set(range(0, 60, 10))})]
)
def test_the_cron_fires_at_exactly_the_interval(every: int, fields: dict[str, set[int]]) -> None:
    assert cron_fields(every) == fields


@pytest.mark.parametrize("every", [45, 90, 420, 5400, 172800])
def test_an_interval_a_cron_cannot_keep_is_refused(every: int) -> None:
    with pytest.raises(ValidationError, match="does not divide a minute, an hour or a day"):
        SyncWorkerSettings(reconcile_every_s=every)


async def test_the_worker_schedules_the_sweep_every_30_seconds(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, worker=SyncWorkerSettings(reconcile_every_s=30)) as env:
        [job] = build_worker(env.settings, env.deps, burst=True, handle_signals=False).cron_jobs
        assert (job.second, job.minute) == ({0, 30}, None)


async def test_a_delivery_naming_a_new_path_leaves_the_move_to_the_sync(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.rename_project(project.id, "store")
    await env.deliver(push_payload(project, project.head()))
    row = await env.deps.db.project(project.id)
    assert row is not None and row.repo_path == "acme/shop"  # still where its points are


async def test_the_sweep_says_it_handed_its_new_projects_to_a_backfill(
    env: SyncEnv, caplog: pytest.LogCaptureFixture
) -> None:
    for i in range(5):  # more than a backfill's slots (3 with 4 worker jobs): they go to a backfill
        env.gitlab.create_project(f"acme/p{i}").commit({SRC + "A.java": service("A")}, "init")
    with caplog.at_level(logging.INFO, logger="app.sync.sweep"):
        handover = await sweep(env.deps, timedelta(0))
    [backfill_id] = await env.deps.db.running_backfills()
    assert (handover.drifts, handover.new, handover.backfill_id) == ([], 5, backfill_id)
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("sweep: 5 listed")]
    assert line == f"sweep: 5 listed (all), 0 heads asked, 0 drifted, 5 new projects handed to backfill {backfill_id}"
    assert await reconcile({"deps": env.deps}) == "0 projects behind; from GitLab: 0 drifted"  # left to it


async def test_a_project_destroyed_while_its_hook_was_lost_is_purged_by_a_full_sweep(env: SyncEnv) -> None:
    gone, kept = env.gitlab.create_project("acme/gone"), env.gitlab.create_project("acme/kept")
    for project in (gone, kept):
        await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.delete_project(gone.id)  # and its project_destroy delivery is lost
    await sweep(env.deps, timedelta(0))  # a full listing
    await env.work()
    assert await env.points(gone.id) == {}
    assert await env.deps.db.project(gone.id) is None
    await env.audit(kept)


async def test_a_project_archived_while_its_hook_was_lost_leaves_scope_at_a_full_sweep(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.set_project_attributes(project.id, archived=True)  # the listing (archived=false) leaves it out
    await sweep(env.deps, timedelta(0))
    await env.work()
    row = await env.deps.db.project(project.id)
    assert row is not None and row.status == "out_of_scope"
    assert await env.points(project.id) == {}


async def test_a_listing_that_misses_most_known_projects_purges_nothing(env: SyncEnv) -> None:
    db = env.deps.db
    for project_id in range(101, 113):  # 12 known projects, none of them listed any more
        await db.request_sync(project_id, f"acme/p{project_id}", "main", None)
    before = len(env.gitlab.calls)
    assert await confirm_unlisted(env.deps, []) == 0
    assert env.gitlab.calls[before:] == []  # not even asked: a token that lost access looks like this
    assert await env.deps.queue.zcard(env.settings.redis.queue) == 0


def test_how_many_missing_projects_can_be_deletions() -> None:
    assert believable(10, 10) and believable(10, 11)  # a few, even of a few
    assert believable(100, 1000) and not believable(101, 1000)  # a tenth of many
    assert not believable(11, 12)


async def test_a_visibility_change_whose_hook_was_lost_is_recorded_by_the_full_sweep(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    env.gitlab.set_project_attributes(project.id, visibility="internal")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    db = env.deps.db
    assert project.id in await db.open_projects()
    env.gitlab.set_project_attributes(project.id, visibility="private")  # and its project_update is lost
    await sweep(env.deps, timedelta(0))
    assert project.id not in await db.open_projects()  # closed to non-members: the access model reads this
    row = await db.project(project.id)
    assert row is not None and (row.visibility, row.repository_access) == ("private", "enabled")
