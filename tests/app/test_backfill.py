"""Backfills at scale (issue 14): a project, a group with its subgroups, or all of GitLab, on the fake GitLab
with 200+ projects across nested groups (archived, empty, personal, forks), real PostgreSQL, Redis and arq.

Each project's outcome is reported, never dropped; progress is derived from the projects' own state;
the dispatcher keeps at most `backfill.concurrency` syncs in flight; a live push during a backfill is
indexed; `force` re-embeds unchanged chunks.
"""

from __future__ import annotations

import argparse
import asyncio
import io
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from arq.constants import result_key_prefix
from starlette.testclient import TestClient

from app.core.settings import BackfillSettings, Settings
from app.ops.admin_client import render
from app.sync.backfill import slots
from app.sync.sweep import THROTTLE
from entry.cli_admin import run_admin_status
from entry.web import create_app
from entry.worker import backfill, backfill_step, reconcile
from testkit.sync_env import SyncEnv, sync_env
from tests.app.test_admin_lists import _unclosed
from tests.app.test_sweep import Clock
from tests.conftest import truncate
from tests.support.org import SRC, populate
from tests.support.sources import plain_java as service
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-backfills-0123"
AUTH = {"Authorization": f"Bearer {ADMIN}"}


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    async with sync_env(tmp_path, clean_db, clean_redis) as e:
        yield with_admin(e)


def with_admin(env: SyncEnv) -> SyncEnv:
    env.settings = env.settings.model_copy(
        update={"admin_tokens": [admin_token(ADMIN)], "backfill": BackfillSettings(concurrency=2, poll_s=0.05)}
    )
    return env


@contextmanager
def admin(env: SyncEnv) -> Iterator[TestClient]:
    with TestClient(create_app(env.settings)) as client:  # its own connections, on the client's loop
        yield client


def _with_settings(env: SyncEnv) -> Any:
    import dataclasses

    return dataclasses.replace(env.deps, settings=env.settings)


async def run(env: SyncEnv, client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    """POST the backfill, run the worker until the queue drains, and answer the final report (every project)."""
    accepted = client.post("/admin/reindex", json=body, headers=AUTH)
    assert accepted.status_code == 202, accepted.text
    env.deps = _with_settings(env)
    await env.work(rounds=50)
    report: dict[str, Any] = client.get(
        f"/admin/backfills/{accepted.json()['backfill_id']}", params={"per_page": 1000}, headers=AUTH
    ).json()
    return report


def by_project(report: dict[str, Any]) -> dict[int, tuple[str, str]]:
    return {r["project_id"]: (r["outcome"], r["state"]) for r in report["results"]}


@pytest.mark.integration
@pytest.mark.timeout(300)
async def test_a_group_backfill_covers_its_subgroups_and_reports_every_project(env: SyncEnv) -> None:
    org = populate(env.gitlab, 210)
    with admin(env) as client:
        report = await run(env, client, {"group": "acme/platform", "include_subgroups": True})
    members = org.in_group("acme/platform")
    assert {r["project_id"] for r in report["results"]} == {p.id for p in members}  # tools/, acme/ itself: not asked
    indexable = org.indexable(members)
    states = by_project(report)
    assert {i for i, (_, state) in states.items() if state == "done"} == indexable
    for project_id in org.archived & {p.id for p in members}:
        assert states[project_id] == ("out_of_scope", "skipped")
    for project_id in org.empty & {p.id for p in members} - org.archived - org.forks:
        assert states[project_id] == ("empty", "skipped")
    assert report["status"] == "done" and report["eta_s"] == 0.0
    assert report["progress"]["done"] == len(indexable) and "queued" not in report["progress"]
    # The worker's start-up sweep discovers and indexes some projects first: the backfill finds those up to date.
    assert 0 < report["files"] <= len(indexable) and report["chunks"] == 2 * report["files"]
    for project in members[:5]:
        if project.id in indexable:
            await env.audit(project)


@pytest.mark.integration
@pytest.mark.timeout(300)
async def test_an_all_backfill_of_200_projects_pages_its_report_and_names_each_failure(env: SyncEnv) -> None:
    org = populate(env.gitlab, 210)
    with admin(env) as client:
        report = await run(env, client, {"all": True})
        assert report["status"] == "done"
        states = by_project(report)
        assert len(states) == 210
        assert {i for i, (_, s) in states.items() if s == "done"} == org.indexable(org.projects)
        for project_id in org.personal - org.archived:
            assert states[project_id][0] == "out_of_scope"
        reasons = {r["project_id"]: r["detail"] for r in report["results"]}
        assert "fork" in reasons[sorted(org.forks - org.archived - org.personal)[0]]
        first = client.get(f"/admin/backfills/{report['id']}", params={"per_page": 50}, headers=AUTH)
        assert len(first.json()["results"]) == 50 and 'rel="next"' in first.headers["link"]
        after = first.json()["results"][-1]["project_id"]
        second = client.get(f"/admin/backfills/{report['id']}", params={"per_page": 50, "after": after}, headers=AUTH)
        assert second.json()["results"][0]["project_id"] > after
        skipped = client.get(f"/admin/backfills/{report['id']}", params={"state": "skipped"}, headers=AUTH).json()
        assert {r["state"] for r in skipped["results"]} == {"skipped"}


@pytest.mark.integration
@pytest.mark.timeout(300)  # as its siblings: 28 s on a busy machine, 60 s was its whole margin
async def test_after_an_all_backfill_of_200_projects_a_lost_push_is_healed_by_the_sweep(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    clock = Clock(-3 * THROTTLE)  # GitLab moves last_activity_at at most once an hour: start in the past
    async with sync_env(tmp_path, clean_db, clean_redis, gitlab_clock=clock) as env:
        org = populate(with_admin(env).gitlab, 210)
        with admin(env) as client:
            assert (await run(env, client, {"all": True}))["status"] == "done"
        await reconcile({"deps": env.deps})  # the first sweep lists all 210 and records the heads it saw
        await env.work()
        clock.offset = timedelta()
        lost = next(p for p in org.projects if p.id in org.indexable(org.projects) and p.namespace == "tools")
        lost.commit({SRC + "Lost.java": service("Lost")}, "a push whose every delivery was lost")
        await reconcile({"deps": env.deps})  # (each burst worker of `env.work` also sweeps at its start)
        await env.work()
        await env.audit(lost)
        row = await env.deps.db.project(lost.id)
        assert row is not None and row.indexed_sha == lost.head()
        last = (await env.runs(lost.id))[-1]
        assert (last["trigger"], last["to_sha"]) == ("reconcile", lost.head())  # healed by the sweep, no delivery


@pytest.mark.integration
@pytest.mark.timeout(300)
async def test_a_first_sweep_of_200_new_projects_leaves_them_to_a_backfill_and_a_push_goes_first(
    env: SyncEnv,
) -> None:
    org = populate(env.gitlab, 210)
    indexable = org.indexable(org.projects)
    new = {p.id for p in org.projects} - org.archived - org.forks - org.personal  # the listing's scope: empty ones too
    env.deps = _with_settings(env)
    db, queue = env.deps.db, env.deps.queue
    await reconcile({"deps": env.deps})  # day one: the first sweep finds every project new
    [backfill_id] = await db.running_backfills()
    assert await db.backfill_outcomes(backfill_id) == {"waiting": len(new)}
    assert await queue.zcard(env.settings.redis.queue) == 1  # the dispatcher's first step, not 150 first syncs
    await reconcile({"deps": env.deps})  # a second sweep leaves them to that backfill
    assert list(await db.running_backfills()) == [backfill_id]

    live = max((p for p in org.projects if p.id in indexable), key=lambda p: p.id)  # the backfill's last one
    await env.push(live, {SRC + "Live.java": service("Live")})
    await env.work(rounds=50)
    with admin(env) as client:
        report = client.get(f"/admin/backfills/{backfill_id}", headers=AUTH).json()
    assert report["status"] == "done" and report["progress"] == {"done": len(new)}
    assert report["target"] == {"discovered": len(new)}
    runs = await env.deps.db.runs_page(None, 0, 1000)
    [pushed] = [r for r in runs if r["project_id"] == live.id and r["trigger"] == "push"]
    before = [r for r in runs if r["id"] != pushed["id"] and r["finished_at"] < pushed["finished_at"]]
    assert len(before) <= 2 * slots(env.settings)  # the push waited behind a few syncs, not behind 150
    await env.audit(live)


async def finished_runs(env: SyncEnv) -> set[int]:
    """The ids of the sync runs that have finished so far."""
    return {r["id"] for r in await env.deps.db.runs_page(None, 0, 10_000) if r["finished_at"] is not None}


async def when_done(env: SyncEnv, backfill_id: int, worker: asyncio.Task[None], count: int) -> None:
    """Wait (while `worker` runs the queue) until `count` of the backfill's projects are done."""
    db = env.deps.db
    while (await db.backfill_totals(backfill_id)).projects.get("done", 0) < count:
        assert not worker.done(), "the backfill ended before it was under way"
        await asyncio.sleep(0.02)


@pytest.mark.integration
@pytest.mark.timeout(300)
async def test_a_push_during_an_all_backfill_of_200_projects_waits_behind_a_few_syncs_not_the_backfill(
    env: SyncEnv,
) -> None:
    org = populate(env.gitlab, 210)
    indexable = org.indexable(org.projects)
    live = max((p for p in org.projects if p.id in indexable), key=lambda p: p.id)  # the backfill's last one
    with admin(env) as client:
        accepted = client.post("/admin/reindex", json={"all": True}, headers=AUTH)
        assert accepted.status_code == 202, accepted.text
        backfill_id = accepted.json()["backfill_id"]
        env.deps = _with_settings(env)
        worker = asyncio.create_task(env.work(rounds=50))
        await when_done(env, backfill_id, worker, 20)  # under way: 20 of its ~150 projects done
        settled = await finished_runs(env)
        sha = await env.push(live, {SRC + "Live.java": service("Live")})
        await worker
        report = client.get(f"/admin/backfills/{backfill_id}", params={"per_page": 1000}, headers=AUTH).json()
    assert report["status"] == "done"
    assert {i for i, (_, s) in by_project(report).items() if s == "done"} == indexable
    runs = await env.deps.db.runs_page(None, 0, 10_000)
    [pushed] = [r for r in runs if r["project_id"] == live.id and r["trigger"] == "push"]
    assert pushed["to_sha"] == sha
    later = [r for r in runs if r["id"] not in settled and r["id"] != pushed["id"]]
    waited = [r for r in later if r["finished_at"] < pushed["finished_at"]]
    # The other backfill (the start-up sweep's discoveries) also keeps its slots busy: two backfills' worth.
    assert len(waited) <= 2 * slots(env.settings), [(r["project_id"], r["trigger"]) for r in waited]
    assert len(later) - len(waited) > 50  # most of the backfill was still to come when the push was indexed
    await env.audit(live)
    row = await env.deps.db.project(live.id)
    assert row is not None and row.indexed_sha == sha


async def test_unknown_ids_paths_and_groups_are_reported_not_dropped(env: SyncEnv) -> None:
    known = env.gitlab.create_project("acme/known")
    known.commit({SRC + "A.java": service("A")}, "init")
    with admin(env) as client:
        listed = await run(env, client, {"projects": [987654, known.id]})
        assert by_project(listed) == {known.id: ("requested", "done"), 987654: ("not_found", "failed")}
        assert listed["progress"] == {"done": 1, "failed": 1}
        status = io.StringIO()
        args = argparse.Namespace(backfill=listed["id"], watch=False)
        client.headers.update(AUTH)
        assert run_admin_status(args, env.settings, status, http=_unclosed(client)) == 1  # a project failed
        assert status.getvalue().splitlines()[1:] == [
            "  failed: 987654 (not_found): GitLab has no such project, or the token cannot see it"
        ]
        by_id = await run(env, client, {"project": 987654})  # an id has a row: reported as a listed id is
        assert by_id["status"] == "done" and by_project(by_id) == {987654: ("not_found", "failed")}
        group = await run(env, client, {"group": "no/such/group"})
        assert group["status"] == "failed" and "no group 'no/such/group'" in group["error"]
        path = await run(env, client, {"project": "acme/nothing"})
        assert path["status"] == "failed" and "no project 'acme/nothing'" in path["error"]
        [line] = render(path, tty=False)  # what `javakb admin reindex` prints of it, without a terminal
        assert line.endswith(f"; 0.0 files/s; error: {path['error']}")
        by_path = await run(env, client, {"project": "acme/known"})
        assert by_project(by_path) == {known.id: ("requested", "done")}


async def test_a_project_the_token_may_not_read_is_reported_forbidden_and_the_others_still_sync(
    env: SyncEnv,
) -> None:
    hidden, known = (env.gitlab.create_project(f"acme/{name}") for name in ("hidden", "known"))
    known.commit({SRC + "A.java": service("A")}, "init")
    db = env.deps.db
    backfill_id = (await db.create_backfill([hidden.id, known.id], False, {})).id
    env.gitlab.fail_next(1, status=403, path_contains=f"/api/v4/projects/{hidden.id}")  # no access to this one
    await backfill({"deps": _with_settings(env), "job_try": 1}, None, False, backfill_id)
    with admin(env) as client:
        report = client.get(f"/admin/backfills/{backfill_id}", params={"state": "failed"}, headers=AUTH).json()
    [refused] = report["results"]
    assert (refused["project_id"], refused["outcome"], refused["state"]) == (hidden.id, "forbidden", "failed")
    assert "403" in refused["detail"]
    assert report["counts"] == {"forbidden": 1, "waiting": 1}  # the readable one goes on to its sync


async def test_the_dispatcher_keeps_at_most_its_slots_in_flight(env: SyncEnv) -> None:
    for i in range(6):
        env.gitlab.create_project(f"acme/p{i}").commit({SRC + f"P{i}.java": service(f"P{i}")}, "init")
    db = env.deps.db
    backfill_id = (await db.create_backfill(None, False, {"group": "acme", "include_subgroups": True})).id
    ctx = {"deps": _with_settings(env), "job_try": 1}
    await backfill(ctx, None, False, backfill_id)
    assert await db.backfill_outcomes(backfill_id) == {"waiting": 6}
    await backfill_step(ctx, backfill_id, 1)  # no worker ran: the requested syncs stay queued
    assert slots(env.settings) == 2
    assert await db.backfill_outcomes(backfill_id) == {"requested": 2, "waiting": 4}
    await backfill_step(ctx, backfill_id, 2)
    assert await db.backfill_outcomes(backfill_id) == {"requested": 2, "waiting": 4}  # nothing settled: no slot
    assert (await db.backfill_totals(backfill_id)).projects == {"queued": 6}


def test_slots_leave_a_worker_slot_to_live_pushes() -> None:
    settings = Settings(backfill=BackfillSettings(concurrency=8))
    assert slots(settings) == settings.worker.max_jobs - 1
    assert slots(Settings(backfill=BackfillSettings(concurrency=1))) == 1


async def test_a_push_during_a_backfill_is_indexed(env: SyncEnv) -> None:
    projects = [env.gitlab.create_project(f"acme/p{i}") for i in range(8)]
    for i, project in enumerate(projects):
        project.commit({SRC + f"P{i}.java": service(f"P{i}")}, "init")
    with admin(env) as client:
        accepted = client.post("/admin/reindex", json={"all": True}, headers=AUTH)
        assert accepted.status_code == 202
        env.deps = _with_settings(env)
        await env.push(projects[5], {SRC + "Live.java": service("Live")})  # before the backfill reached it
        await env.work(rounds=50)
        report = client.get(f"/admin/backfills/{accepted.json()['backfill_id']}", headers=AUTH).json()
    assert report["progress"] == {"done": 8}
    for project in projects:
        await env.audit(project)


async def test_force_embeds_unchanged_chunks_again(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B")})
    await env.work()
    with admin(env) as client:
        plain = await run(env, client, {"project": project.id, "full": True})
        forced = await run(env, client, {"project": "acme/shop", "force": True})
    assert plain["force"] is False and forced["force"] is True
    runs = await env.runs(project.id)
    assert [(r["mode"], r["chunks_embedded"], r["chunks_reused"]) for r in runs] == [
        ("archive", 4, 0),  # the first sync
        ("tree", 0, 0),  # full: the tree walk finds every blob unchanged
        ("archive", 4, 0),  # force: every chunk embedded again, from one archive
    ]
    assert forced["chunks"] == 4
    await env.audit(project)


async def test_a_backfill_after_postgresql_is_recreated_under_the_kept_redis_runs_to_its_end(
    env: SyncEnv, clean_db: str
) -> None:
    """A recreated (or restored) PostgreSQL hands the same backfill ids out again; Redis still holds the old jobs."""
    for i in range(3):
        env.gitlab.create_project(f"acme/p{i}").commit({SRC + f"P{i}.java": service(f"P{i}")}, "init")
    queue = env.deps.queue
    with admin(env) as client:
        first = await run(env, client, {"all": True})
        assert first["status"] == "done"
        assert await queue.keys(result_key_prefix + "backfill:*")  # arq keeps the steps' results an hour
        await truncate(clean_db)  # every table emptied, every id sequence restarted; Redis kept
        second = await run(env, client, {"all": True})
    assert second["id"] == first["id"]  # the same row id again
    assert second["status"] == "done" and second["progress"] == {"done": 3}, second
