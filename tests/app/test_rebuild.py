"""A model rebuild in service mode (issue 14): a new generation from every project under live pushes, then the switch;
on a few projects and on the 210-project org of `tests/support/org.py`.

Two fake embedding servers stand for two models of different sizes: the old generation holds 16-float
vectors, the new one must hold 24-float vectors of the next model for every chunk (nothing copied).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from qdrant_client import models as qm
from starlette.testclient import TestClient

from app.auth.access import LOCAL as EVERYTHING
from app.core.settings import BackfillSettings, EmbeddingSettings
from app.core.states import RebuildProjectStatus, RebuildStatus
from app.jobs.queue import REBUILD, enqueue_once, rebuild_job_id
from app.search.scoping import Filters
from app.store.vectors import DENSE, IndexModel
from app.sync import rebuild
from entry.rebuild_cli import follow as follow_rebuild
from entry.rebuild_cli import progress_line
from entry.web import create_app
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.app.test_sync_scenarios import SRC
from tests.conftest import truncate
from tests.support.org import populate
from tests.support.sources import repo_service_java as service
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-tests-0123"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
OLD_DIM, NEW_DIM = 16, 24


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    with FakeEmbeddingServer(dim=OLD_DIM) as old, FakeEmbeddingServer(dim=NEW_DIM, model="next") as new:
        following = EmbeddingSettings(base_url=new.base_url, model="next", max_retries=1, max_backoff_s=0.05)
        async with sync_env(tmp_path, clean_db, clean_redis, embedding_url=old.base_url, next_embedding=following) as e:
            yield e


async def indexed_projects(env: SyncEnv, n: int) -> list[FakeProject]:
    projects = []
    for i in range(n):
        project = env.gitlab.create_project(f"acme/team{i % 2}/svc{i}")
        await env.push(project, {SRC + f"A{i}.java": service(f"A{i}"), SRC + f"B{i}.java": service(f"B{i}")})
        projects.append(project)
    await env.work()
    return projects


async def dense_sizes(env: SyncEnv) -> set[int]:
    """The sizes of the dense vectors of every point behind the alias."""
    sizes = set()
    async for record in env.deps.store.scroll(qm.Filter(must=[]), False, with_vectors=True):
        assert isinstance(record.vector, dict)
        dense = record.vector[DENSE]
        assert isinstance(dense, list)
        sizes.add(len(dense))
    return sizes


async def test_a_rebuild_under_live_pushes_switches_to_a_complete_new_generation(env: SyncEnv) -> None:
    projects = await indexed_projects(env, 6)
    old = await env.deps.store.target()
    db = env.deps.db
    rebuild_id = (await db.create_rebuild()).id
    await rebuild.start(env.deps, rebuild_id)  # the new generation exists; pushes now go to both
    row = await db.rebuild(rebuild_id)
    assert row is not None and row.status == RebuildStatus.BUILDING and row.collection != old

    first, second, third = projects[0], projects[1], projects[2]
    # A project rebuilt before a push: the push must reach the new generation too.
    await rebuild.rebuild_project(env.deps, rebuild_id, second.id)
    await env.push(second, {SRC + "B1.java": service("B1", "return 7;"), SRC + "C1.java": service("C1")})
    # A project pushed before its rebuild: add, modify, delete and rename.
    await env.push(first, {SRC + "A0.java": service("A0", "return 3;"), SRC + "B0.java": None})
    first.rename(SRC + "A0.java", SRC + "moved/A0.java", "move A0")
    await env.deliver(push_payload(first, first.head()))
    # Searches are served by the old generation, with the old model, while it builds.
    assert await env.deps.store.target() == old
    assert await env.deps.search.search(EVERYTHING, "compute", Filters(), 5)
    await env.work()  # the syncs, the other projects' rebuild jobs and the switch, interleaved

    row = await db.rebuild(rebuild_id)
    assert row is not None and row.status == RebuildStatus.DONE, row
    assert await env.deps.store.target() == row.collection
    assert await env.deps.store.generations() == [row.collection]  # the old generation is dropped
    assert await env.deps.store.recorded_model() == IndexModel(embedding_model="next", dimension=NEW_DIM)
    assert await dense_sizes(env) == {NEW_DIM}  # every vector is the next model's: none copied
    await env.push(third, {SRC + "D2.java": service("D2")})  # after the switch: written with the next model
    await env.work()
    assert await dense_sizes(env) == {NEW_DIM}
    for project in projects:
        await env.audit(project)  # no missing, stale or duplicate chunk; citations on the branch
    assert await env.deps.search.search(EVERYTHING, "compute", Filters(), 5)  # questions use the next model
    progress = await db.rebuild_progress(rebuild_id)
    assert progress.projects == {RebuildProjectStatus.DONE: 6}


async def when_rebuilt(env: SyncEnv, rebuild_id: int, worker: asyncio.Task[None], count: int) -> None:
    """Wait (while `worker` runs the queue) until `count` of the rebuild's projects are rebuilt."""
    db = env.deps.db
    while (await db.rebuild_progress(rebuild_id)).projects.get(RebuildProjectStatus.DONE, 0) < count:
        assert not worker.done(), "the rebuild ended before it was under way"
        await asyncio.sleep(0.02)


@pytest.mark.integration
@pytest.mark.timeout(300)
async def test_a_rebuild_of_a_200_project_org_under_pushes_switches_to_a_complete_generation(env: SyncEnv) -> None:
    env.settings = env.settings.model_copy(update={"backfill": BackfillSettings(concurrency=3, poll_s=0.05)})
    env.deps = dataclasses.replace(env.deps, settings=env.settings)
    org = populate(env.gitlab, 210)
    indexable = sorted(org.indexable(org.projects))
    await env.work(rounds=50)  # the start-up sweep finds them all new and leaves them to a backfill
    old = await env.deps.store.target()
    rebuild_id = await rebuild.request(env.deps)  # what POST /admin/rebuild does
    worker = asyncio.create_task(env.work(rounds=50))
    await when_rebuilt(env, rebuild_id, worker, 30)
    by_id = {p.id: p for p in org.projects}
    pushed = [by_id[indexable[0]], by_id[indexable[len(indexable) // 2]], by_id[indexable[-1]]]
    db = env.deps.db
    assert not await db.rebuild_pending(rebuild_id, pushed[0].id)  # pushed after its rebuild: both generations
    assert await db.rebuild_pending(rebuild_id, pushed[-1].id)  # pushed before its rebuild
    for i, project in enumerate(pushed):
        await env.push(project, {SRC + f"Live{i}.java": service(f"Live{i}")})
    assert await env.deps.store.target() == old  # the old generation serves while the new one fills
    await worker

    row = await db.rebuild(rebuild_id)
    assert row is not None and row.status == RebuildStatus.DONE, row
    assert await env.deps.store.target() == row.collection != old
    assert await env.deps.store.generations() == [row.collection]
    assert await dense_sizes(env) == {NEW_DIM}
    progress = await db.rebuild_progress(rebuild_id)
    assert progress.projects.get(RebuildProjectStatus.DONE) == len(indexable) and not progress.failed, progress
    assert set(progress.projects) <= {RebuildProjectStatus.DONE, RebuildProjectStatus.SKIPPED}
    for project_id in indexable:
        await env.audit(by_id[project_id])  # no missing, stale or duplicate chunk in the new generation
    for project in pushed:
        indexed = await db.project(project.id)
        assert indexed is not None and indexed.indexed_sha == project.head()


async def test_a_destroyed_project_leaves_both_generations(env: SyncEnv) -> None:
    projects = await indexed_projects(env, 2)
    db = env.deps.db
    rebuild_id = (await db.create_rebuild()).id
    await rebuild.start(env.deps, rebuild_id)
    await rebuild.rebuild_project(env.deps, rebuild_id, projects[0].id)
    env.gitlab.delete_project(projects[0].id)
    await env.deliver({"event_name": "project_destroy", "project_id": projects[0].id, "path_with_namespace": "x/y"})
    await env.work()
    row = await db.rebuild(rebuild_id)
    assert row is not None and row.status == RebuildStatus.DONE
    assert await env.points(projects[0].id) == {}
    await env.audit(projects[1])


def test_the_admin_api_starts_one_rebuild_at_a_time_and_reports_it(env: SyncEnv) -> None:
    settings = env.settings.model_copy(update={"admin_tokens": [admin_token(ADMIN)]})
    with TestClient(create_app(settings)) as client:
        assert client.post("/admin/rebuild").status_code == 401
        accepted = client.post("/admin/rebuild", headers=AUTH)
        assert accepted.status_code == 202, accepted.text
        rebuild_id = accepted.json()["rebuild_id"]
        assert accepted.json()["status"] == "queued"
        assert client.post("/admin/rebuild", headers=AUTH).status_code == 409  # one at a time
        report = client.get(f"/admin/rebuilds/{rebuild_id}", headers=AUTH)
        assert report.status_code == 200
        assert report.json()["status"] == "queued" and report.json()["projects"] == {}
        assert client.get("/admin/rebuilds/999", headers=AUTH).status_code == 404
        assert client.get(f"/admin/rebuilds/{rebuild_id}").status_code == 401


async def test_a_queued_rebuild_runs_to_its_switch_through_the_worker(env: SyncEnv) -> None:
    projects = await indexed_projects(env, 3)
    db = env.deps.db
    opened = await db.create_rebuild()
    rebuild_id = opened.id
    await enqueue_once(env.deps.queue, REBUILD, rebuild_job_id(rebuild_id, opened.job_token), rebuild_id)
    await env.work()
    row = await db.rebuild(rebuild_id)
    assert row is not None and row.status == RebuildStatus.DONE
    progress = await db.rebuild_progress(rebuild_id)
    assert progress.files == 6 and progress.chunks > 0
    for project in projects:
        await env.audit(project)


async def test_a_rebuild_after_postgresql_is_recreated_under_the_kept_redis_runs_to_its_switch(
    env: SyncEnv, clean_db: str
) -> None:
    """The rebuild ids repeat after PostgreSQL is recreated; the job ids (and so arq's kept results) do not."""
    await indexed_projects(env, 1)
    db = env.deps.db
    first = await rebuild.request(env.deps)
    await env.work()
    await truncate(clean_db)  # Redis keeps the first rebuild's results (its start's, an hour)
    second = await rebuild.request(env.deps)
    await env.work()
    assert second == first
    row = await db.rebuild(second)
    assert row is not None and row.status == RebuildStatus.DONE, row


async def test_the_cli_starts_a_rebuild_and_follows_it_to_the_switch(env: SyncEnv) -> None:
    await indexed_projects(env, 2)
    out = io.StringIO()

    async def work_instead_of_waiting(seconds: float) -> None:
        await env.work()

    assert await follow_rebuild(env.settings, None, True, out, work_instead_of_waiting) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "rebuild 1 queued"
    assert lines[-1].startswith("rebuild 1: done: 2 done; ")
    assert progress_line("building", {"done": 1, "pending": 3}, 40, 12.4, None) == (
        "building: 1 done, 3 pending; 40 chunks, about 12 s left"
    )


async def test_a_project_that_cannot_be_rebuilt_fails_the_rebuild_and_the_old_generation_keeps_serving(
    env: SyncEnv,
) -> None:
    projects = await indexed_projects(env, 2)
    old = await env.deps.store.target()
    db = env.deps.db
    rebuild_id = (await db.create_rebuild()).id
    await rebuild.start(env.deps, rebuild_id)
    env.gitlab.fail_next(10, status=404, path_contains="/repository/blobs/")  # the project exists, its blobs do not
    await env.work()
    row = await db.rebuild(rebuild_id)
    assert row is not None and row.status == RebuildStatus.FAILED
    assert row.error is not None and "GitLabNotFoundError" in row.error
    assert await env.deps.store.generations() == [old]  # the new generation is dropped
    assert await dense_sizes(env) == {OLD_DIM}
    await env.push(projects[0], {SRC + "E0.java": service("E0")})  # pushes go to the old generation only
    await env.work()
    for project in projects:
        await env.audit(project)
    assert await db.active_rebuild() is None
    assert (await db.create_rebuild()).id == rebuild_id + 1  # a new one may start
