"""The index status (issue 14): every field true after a push, after drift and its heal, after a failed
run; filtered to what the caller may read inside the query; and a sweep that costs PostgreSQL the same
few statements however many projects drifted.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.auth.access import Access, everything
from app.core.errors import EmbeddingUnavailableError
from app.core.events import GitLabEvent
from app.sync.status import StatusItem, index_status
from app.sync.sweep import THROTTLE, sweep
from app.sync.syncer import Syncer
from entry.worker import reconcile
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.standins import Method, around
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.app.test_sweep import Clock
from tests.conftest import truncate
from tests.support.sources import service_java as service

SRC = "src/main/java/com/acme/"
ALL = everything("test")


async def status_of(env: SyncEnv, repo: str, access: Access = ALL) -> StatusItem:
    items = await index_status(env.deps.db, access, repo)
    assert [i["repo"] for i in items] == [repo]
    return items[0]


async def test_every_field_is_true_before_and_after_a_pushed_sync(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    sha = project.commit({SRC + "A.java": service("A"), SRC + "B.java": service("B")}, "first")
    await env.deliver(push_payload(project, sha))
    waiting = await status_of(env, "acme/shop")
    assert waiting["behind"] and waiting["state"] == "pending" and not waiting["syncing"]
    assert waiting["gitlab_head"] is None and waiting["head_checked_at"] is None  # a delivery is not a check
    assert waiting["indexed_sha"] is None and waiting["lag_commits"] is None
    assert waiting["lag_seconds"] is not None and waiting["lag_seconds"] >= 0
    await env.work()
    synced = await status_of(env, "acme/shop")
    points = await env.points(project.id)
    assert synced == {
        **synced,
        "behind": False, "state": "ok", "indexed_sha": sha, "gitlab_head": sha, "lag_commits": 0, "lag_seconds": 0.0,
        "syncing": False, "last_run": "DONE", "last_run_trigger": "push", "last_error": None, "files": 2,
        "chunks": len(points), "project_id": project.id, "default_branch": "main",
    }  # fmt: skip
    assert synced["head_checked_at"] is not None and synced["indexed_at"] is not None and synced["chunks"] > 0


async def test_a_lost_push_is_seen_by_the_sweep_with_when_it_was_checked_and_healed(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    clock = Clock(-3 * THROTTLE)
    async with sync_env(tmp_path, clean_db, clean_redis, gitlab_clock=clock) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + "A.java": service("A")})
        await env.work()
        before = await status_of(env, "acme/shop")
        clock.offset = timedelta()
        lost = project.commit({SRC + "B.java": service("B")}, "lost push")
        assert not (await status_of(env, "acme/shop"))["behind"]  # nobody told us yet: as last checked
        await reconcile({"deps": env.deps})
        drifted = await status_of(env, "acme/shop")
        assert drifted["gitlab_head"] == lost and drifted["indexed_sha"] == before["indexed_sha"]
        assert drifted["behind"] and drifted["state"] == "pending"
        assert drifted["head_checked_at"] is not None and drifted["head_checked_at"] > str(before["head_checked_at"])
        assert drifted["lag_seconds"] is not None and drifted["lag_seconds"] >= 0
        await env.work()
        healed = await status_of(env, "acme/shop")
        assert healed["indexed_sha"] == healed["gitlab_head"] == lost
        assert (healed["behind"], healed["lag_commits"], healed["lag_seconds"]) == (False, 0, 0.0)
        assert healed["last_run_trigger"] == "reconcile" and healed["files"] == 2
        await env.audit(project)


async def test_a_failed_run_shows_its_error_and_the_commits_its_compare_counted(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    with FakeEmbeddingServer(dim=16) as embedder:
        async with sync_env(tmp_path, clean_db, clean_redis, embedding_url=embedder.base_url) as env:
            project = env.gitlab.create_project("acme/shop")
            await env.push(project, {SRC + "A.java": service("A")})
            await env.work()
            for i in range(3):
                head = project.commit({SRC + f"C{i}.java": service(f"C{i}")}, f"commit {i}")
            await env.deliver(push_payload(project, head))
            embedder.fail_next(2, status=503)  # the client's two attempts: this run fails (the job would retry)
            row = await env.deps.db.project(project.id)
            assert row is not None
            with pytest.raises(EmbeddingUnavailableError):
                await Syncer(env.deps).sync_once(row, GitLabEvent.PUSH)
            failed = await status_of(env, "acme/shop")
            assert failed["state"] == "failed" and failed["last_error"] and failed["last_run"] == "FAILED"
            assert failed["behind"] and failed["gitlab_head"] == head and failed["lag_commits"] == 3
            await env.work()
            done = await status_of(env, "acme/shop")
            assert (done["state"], done["lag_commits"], done["indexed_sha"], done["last_error"]) == (
                "ok",
                0,
                head,
                None,
            )


async def test_the_status_reads_only_what_the_caller_may_read(env: SyncEnv) -> None:
    paths = ["acme/shop", "acme/billing", "acme-corp/x", "other/tools"]
    projects = {path: env.gitlab.create_project(path) for path in paths}
    for project in projects.values():
        await env.deliver(push_payload(project, project.commit({SRC + "A.java": service("A")}, "first")))
    db = env.deps.db
    shop_id = projects["acme/shop"].id
    accesses = [
        ALL,
        Access(subject="svc", repo_prefixes=("acme/",)),
        Access(subject="svc", repo_prefixes=("acme/shop", "other/")),
        Access(subject="svc", repo_prefixes=()),
        Access(subject="user:1", project_ids=frozenset({shop_id, projects["other/tools"].id})),
        Access(subject="user:2", project_ids=frozenset()),
    ]
    for access in accesses:
        shown = [i["repo"] for i in await index_status(db, access)]
        assert shown == sorted(p for p, fp in projects.items() if access.may_read(p, fp.id)), access
    assert [i["repo"] for i in await index_status(db, ALL, "acme/")] == ["acme/billing", "acme/shop"]
    assert [i["repo"] for i in await index_status(db, accesses[4], "acme/")] == ["acme/shop"]
    assert await index_status(db, accesses[1], "other/tools") == []  # asked by name, still not readable


async def test_a_sweep_costs_postgresql_the_same_statements_for_one_drift_or_five(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    async def statements_of_a_sweep(drifted: int) -> int:
        clock = Clock(-3 * THROTTLE)
        await truncate(clean_db)  # each run starts from nothing (its fake GitLab numbers projects from 1)
        async with sync_env(tmp_path / str(drifted), clean_db, clean_redis, gitlab_clock=clock) as env:
            await env.deps.queue.flushdb()  # the test Redis database (JAVAKB_TEST_REDIS)
            projects = [env.gitlab.create_project(f"acme/p{i}") for i in range(drifted)]
            for project in projects:
                await env.push(project, {SRC + "A.java": service("A")})
            await env.work()
            clock.offset = timedelta()
            for project in projects:
                project.commit({SRC + "B.java": service("B")}, "lost push")
            counted: list[str] = []

            def count(method: Method) -> Method:
                async def counting(query: str, *args: Any) -> Any:
                    counted.append(query)
                    return await method(query, *args)

                return counting

            db = around(env.deps.db, _fetch=count, _fetchrow=count, _fetchval=count, _execute=count)
            handover = await sweep(dataclasses.replace(env.deps, db=db), timedelta(hours=1))
            assert len(handover.drifts) == drifted
            await env.work()
            for project in projects:
                await env.audit(project)
            return len(counted)

    assert await statements_of_a_sweep(1) == await statements_of_a_sweep(5)


async def test_a_repository_name_postgresql_cannot_hold_finds_nothing(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.deliver(push_payload(project, project.commit({SRC + "A.java": service("A")}, "first")))
    for odd in ("acme/\x00shop", "acme/\udcff"):
        assert await index_status(env.deps.db, ALL, odd) == []
        assert await env.deps.db.project_at(odd) is None
