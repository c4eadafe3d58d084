"""More sync scenarios: fallbacks to a tree walk, odd files, default branch changes, killed and
concurrent workers, a PostgreSQL outage and a sync without GitLab configured (the sweep, tokens and
the backfill: `test_sync_recovery.py`).

Same stack as `test_sync_scenarios.py`: fake GitLab over real git, real PostgreSQL/Redis/arq,
embedded Qdrant; `audit` compares the index with the git tree at the head.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from arq import Retry
from pydantic import SecretStr

from app.core.events import GitLabEvent
from app.core.settings import (
    ChunkingSettings,
    PostgresSettings,
    QdrantSettings,
    QueueSettings,
    Settings,
    SyncWorkerSettings,
)
from app.sync.deliveries import DeliveryRecorder
from entry.deps import open_service
from entry.worker import NO_GITLAB, build_worker, replay_delivery, sync_project
from hooks.events import SyncRequested, parse_event
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.support.pg_outage import postgres_down
from tests.support.sources import repo_service_java as service

SRC = "src/main/java/com/acme/"


def big_service(name: str, statements: int = 80) -> str:
    """A service whose one method is long: a few kilobytes of source."""
    return service(name, " ".join(f"repo.find({i});" for i in range(statements)) + " return 0;")


async def last_run(env: SyncEnv, project: FakeProject) -> dict[str, Any]:
    runs = await env.runs(project.id)
    assert runs, "no sync run"
    return runs[-1]


def files_of(points: dict[str, dict[str, Any]]) -> set[str]:
    return {str(p["file_path"]) for p in points.values()}


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    """Poll a condition of work running concurrently (there is no event to wait on)."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.01)


# -- fallbacks to a tree walk ---------------------------------------------------------------------


async def test_a_compare_that_overflows_falls_back_to_a_tree_walk(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + f"S{i}.java": service(f"S{i}") for i in range(4)})
    await env.work()
    env.gitlab.max_diff_files = 2
    await env.push(
        project,
        {
            SRC + "S0.java": service("S0", "return 2;"),
            SRC + "S1.java": None,
            SRC + "S2.java": service("S2", "return 3;"),
            SRC + "N0.java": service("N0"),
            SRC + "N1.java": service("N1"),
        },
    )
    await env.work()
    await env.audit(project)
    assert env.gitlab.call_count("/repository/compare") == 1
    run = await last_run(env, project)
    assert (run["mode"], run["status"], run["files_changed"]) == ("tree", "DONE", 5)


def force_push_unrelated_root(project: FakeProject, files: dict[str, str]) -> str:
    """Replace the default branch by a commit without parents, then drop every unreachable object.

    The old commits are gone from the repository afterwards, as after a force push and GitLab's
    housekeeping: comparing from them answers 404.
    """
    repo = project.repo
    repo.run("checkout", "-q", "--orphan", "rewrite")
    repo.run("rm", "-rq", "--cached", ".")
    repo.run("clean", "-fdq")
    for rel, content in files.items():
        target = repo.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        repo.run("add", "--", rel)
    sha = repo.commit_index("unrelated root")
    repo.run("update-ref", f"refs/heads/{project.default_branch}", sha)
    repo.run("checkout", "-q", "-f", project.default_branch)
    repo.run("branch", "-q", "-D", "rewrite")
    repo.run("reflog", "expire", "--expire=now", "--all")
    repo.run("gc", "-q", "--prune=now")
    return sha


async def test_a_base_commit_that_is_gone_falls_back_to_a_tree_walk(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    old = await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B")})
    await env.work()
    new = force_push_unrelated_root(project, {SRC + "A.java": service("A"), SRC + "C.java": service("C")})
    assert project.repo.object_type(old) is None  # the indexed commit no longer exists
    await env.deliver(push_payload(project, new, before=old))
    await env.work()
    await env.audit(project)
    assert env.gitlab.call_count("/repository/compare") == 1  # answered 404
    run = await last_run(env, project)
    assert (run["mode"], run["status"], run["from_sha"], run["to_sha"]) == ("tree", "DONE", old, new)


# -- odd files ------------------------------------------------------------------------------------


async def test_a_file_over_the_size_limit_is_skipped_and_recorded(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, chunking=ChunkingSettings(max_file_bytes=1000)) as env:
        project = env.gitlab.create_project("acme/shop")
        assert len(service("Grows").encode()) < 1000 < len(big_service("Big").encode())
        files: dict[str, str | bytes | None] = {
            SRC + "Small.java": service("Small"),
            SRC + "Big.java": big_service("Big"),
        }
        head = await env.push(project, files | {SRC + "Grows.java": service("Grows")})
        await env.work()
        await env.audit(project)  # the manifest holds Big.java; no chunk of it is expected
        run = await last_run(env, project)
        assert (run["status"], run["files_changed"], run["files_parsed"], run["files_skipped"]) == ("DONE", 3, 2, 1)
        assert files_of(await env.points(project.id)) == {SRC + "Small.java", SRC + "Grows.java"}
        big_blob = project.repo.blob_at(head, SRC + "Big.java")
        assert big_blob is not None
        assert (await env.deps.db.manifest(project.id))[SRC + "Big.java"] == big_blob.sha

        # A file that grows over the limit loses its points: none may linger from its old version.
        await env.push(project, {SRC + "Grows.java": big_service("Grows")})
        await env.work()
        await env.audit(project)
        run = await last_run(env, project)
        assert (run["mode"], run["status"], run["files_skipped"]) == ("compare", "DONE", 1)
        assert files_of(await env.points(project.id)) == {SRC + "Small.java"}

        # The next tree walk finds both big files in the manifest and does not download them again.
        env.gitlab.max_diff_files = 0
        fetched = env.gitlab.call_count("/blobs/"), env.gitlab.call_count("/files/")
        await env.push(project, {SRC + "Small.java": service("Small", "return 5;")})
        await env.work()
        await env.audit(project)
        run = await last_run(env, project)
        assert (run["mode"], run["files_changed"], run["files_skipped"]) == ("tree", 1, 0)
        assert (env.gitlab.call_count("/blobs/"), env.gitlab.call_count("/files/")) == (fetched[0] + 1, fetched[1])


LEGACY = (
    "package com.acme;\n\n/** Caf\u00e9 r\u00e9sum\u00e9 \u2014 na\u00efve. */\npublic class Legacy {\n"
    '    public String owner() { return "M\u00fcller"; }\n}\n'
)


async def test_binary_and_cp1252_java_files(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    binary = b"PK\x03\x04\x00\x00\x08\x00" + bytes(range(256))
    with_odd_files = {SRC + "Legacy.java": LEGACY.encode("cp1252"), SRC + "Blob.java": binary}
    await env.push(project, {SRC + "A.java": service("A"), **with_odd_files})
    await env.work()
    await env.audit(project)
    run = await last_run(env, project)
    assert (run["status"], run["files_parsed"], run["files_skipped"]) == ("DONE", 2, 1)
    points = await env.points(project.id)
    assert files_of(points) == {SRC + "A.java", SRC + "Legacy.java"}
    owner = [p for p in points.values() if p["name"] == "owner"]
    assert len(owner) == 1 and "M\u00fcller" in owner[0]["code"]  # decoded as windows-1252, stored as text

    # The same files changed again go through compare and raw files instead of blobs.
    legacy2 = LEGACY.replace("M\u00fcller", "Ni\u00f1o").encode("cp1252")
    await env.push(project, {SRC + "Legacy.java": legacy2, SRC + "Blob.java": binary[::-1]})
    await env.work()
    await env.audit(project)
    run = await last_run(env, project)
    assert (run["mode"], run["status"], run["files_parsed"], run["files_skipped"]) == ("compare", "DONE", 1, 1)


BROKEN = (
    "package com.acme;\n\npublic class Broken {\n"
    "    public int good() { return 1; }\n\n"
    "    public int bad( { return ; \n\n"
    "    public int alsoGood() { return 2; }\n}\n"
)


async def test_a_broken_java_file_indexes_what_parses(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(
        project,
        {SRC + "Broken.java": BROKEN, SRC + "Garbage.java": "}}} not ((( java ;;; {{{", SRC + "A.java": service("A")},
    )
    await env.work()
    await env.audit(project)
    run = await last_run(env, project)
    assert (run["status"], run["files_parsed"], run["files_skipped"]) == ("DONE", 2, 1)
    points = await env.points(project.id)
    names = {p["name"] for p in points.values() if p["file_path"] == SRC + "Broken.java"}
    assert "good" in names
    assert all(p["file_path"] != SRC + "Garbage.java" for p in points.values())


# -- project_update -------------------------------------------------------------------------------


def project_update(project: FakeProject) -> dict[str, Any]:
    return {
        "event_name": "project_update",
        "project_id": project.id,
        "path_with_namespace": project.path_with_namespace,
    }


async def test_a_new_default_branch_resyncs_the_whole_tree(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B")})
    await env.work()
    develop = {SRC + "B.java": None, SRC + "D.java": service("D"), SRC + "A.java": service("A", "return 9;")}
    project.commit(develop, "develop work", branch="develop")
    env.gitlab.set_default_branch(project.id, "develop")
    assert await env.deliver(project_update(project)) == "enqueued"
    await env.work()
    await env.audit(project)  # against develop's head
    run = await last_run(env, project)
    assert (run["mode"], run["trigger"], run["status"]) == ("tree", "default_branch_changed", "DONE")
    row = await env.deps.db.project(project.id)
    assert row is not None and (row.default_branch, row.full_sync) == ("develop", False)


async def test_a_project_update_with_the_same_default_branch_syncs_nothing(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    before = await env.deps.db.project(project.id)
    assert await env.deliver(project_update(project)) == "enqueued"
    await env.work()
    await env.audit(project)
    assert len(await env.runs(project.id)) == 1
    after = await env.deps.db.project(project.id)
    assert before is not None and after is not None
    assert (after.requested_gen, after.indexed_sha) == (before.requested_gen, before.indexed_sha)


# -- killed and concurrent workers ----------------------------------------------------------------


async def test_a_worker_killed_mid_sync_is_resumed_by_the_next_one(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    worker_settings = SyncWorkerSettings(max_jobs=4, files_per_batch=2)
    async with sync_env(tmp_path, clean_db, clean_redis, worker=worker_settings) as env:
        db = env.deps.db
        project = env.gitlab.create_project("acme/shop")
        n = 40
        await env.push(project, {SRC + f"F{i}.java": service(f"F{i}") for i in range(n)})
        worker = build_worker(env.settings, env.deps, handle_signals=False)
        task = asyncio.create_task(worker.main())

        async def mid_flight() -> bool:
            running = [r for r in await db.runs(project.id) if r["status"] == "RUNNING"]
            return bool(running) and len(await db.manifest(project.id)) >= 6

        await eventually(mid_flight)
        # What arq does on SIGTERM: cancel the running jobs, which stay queued to run again; then stop.
        # A SIGKILLed process is the same for PostgreSQL (its connections drop, and the advisory lock
        # with them) and for arq (the job is picked up again once its in-progress key expires).
        worker.handle_sig(signal.SIGTERM)
        task.cancel()
        await asyncio.gather(task, *worker.tasks.values(), return_exceptions=True)
        assert len(await db.manifest(project.id)) < n  # it was really stopped half way
        async with db.project_lock(project.id) as locked:
            assert locked  # the killed job released the project's lock

        await env.work()
        await env.audit(project)
        row = await db.project(project.id)
        assert row is not None and row.indexed_sha == project.head() and row.status == "ok"
        assert env.gitlab.call_count("/blobs/") <= n + worker_settings.files_per_batch  # resumed, not redone


async def test_a_killed_run_is_not_left_running(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, worker=SyncWorkerSettings(files_per_batch=2)) as env:
        db = env.deps.db
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + f"F{i}.java": service(f"F{i}") for i in range(30)})
        worker = build_worker(env.settings, env.deps, handle_signals=False)
        task = asyncio.create_task(worker.main())

        async def running() -> bool:
            return any(r["status"] == "RUNNING" for r in await db.runs(project.id))

        await eventually(running)
        worker.handle_sig(signal.SIGTERM)
        task.cancel()
        await asyncio.gather(task, *worker.tasks.values(), return_exceptions=True)
        await env.work()
        await env.audit(project)
        # The run history must not claim that a dead run is still going.
        statuses = [r["status"] for r in await db.runs(project.id)]
        assert "RUNNING" not in statuses, statuses


async def test_two_workers_never_sync_one_project_in_parallel(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    worker_settings = SyncWorkerSettings(max_jobs=1, files_per_batch=4)
    async with sync_env(tmp_path, clean_db, clean_redis, worker=worker_settings) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {SRC + f"F{i}.java": service(f"F{i}") for i in range(20)})
        await env.push(project, {SRC + "F0.java": service("F0", "return 2;")})  # a second queued job

        async def pushes() -> None:
            for i in range(4):
                await asyncio.sleep(0.05)
                sha = await asyncio.to_thread(project.commit, {SRC + f"G{i}.java": service(f"G{i}")}, f"g{i}")
                await env.deliver(push_payload(project, sha))

        workers = [build_worker(env.settings, env.deps, burst=True, handle_signals=False) for _ in range(2)]
        await asyncio.gather(*(w.main() for w in workers), pushes())
        # A job that found the lock taken returned instead of retrying: nothing spun on the lock.
        assert sum(w.jobs_retried for w in workers) == 0
        await env.work()
        await env.audit(project)
        runs = list(reversed(await env.deps.db.runs(project.id)))
        assert len(runs) >= 2
        assert all(r["status"] == "DONE" and r["finished_at"] is not None for r in runs)
        for earlier, later in itertools.pairwise(runs):
            assert earlier["finished_at"] <= later["started_at"], (earlier, later)


# -- reconcile, auth, backfill --------------------------------------------------------------------


async def test_a_push_during_a_postgresql_outage_is_replayed_by_the_worker(env: SyncEnv, clean_db: str) -> None:
    # GitLab never resends: the receiver queues the event whole, and the worker records it (retrying
    # while PostgreSQL is still down) and syncs, as if it had arrived when PostgreSQL was up.
    project = env.gitlab.create_project("acme/shop")
    sha = project.commit({SRC + "A.java": service("A")}, "a")
    event = parse_event(push_payload(project, sha))
    async with postgres_down(clean_db):
        assert (await env.receiver.handle_or_defer(event, "k-outage"))[0] == "deferred"
        ctx = {"deps": env.deps, "job_try": 3}
        with pytest.raises(Retry):  # still down when the worker first tries
            await replay_delivery(ctx, event, "k-outage")
    await env.work()
    await env.audit(project)
    run = await last_run(env, project)
    assert (run["trigger"], run["status"], run["to_sha"]) == ("push", "DONE", sha)
    assert await env.deps.db.delivery_outcome("k-outage") == "enqueued"
    assert (await env.receiver.handle(event, "k-outage"))[0] == "duplicate"  # a manual resend changes nothing


async def test_without_gitlab_configured_a_sync_fails_with_what_to_set(clean_db: str, clean_redis: str) -> None:
    # `javakb serve` on bare defaults records deliveries but has no GitLab to read them from.
    settings = Settings(
        postgres=PostgresSettings(dsn=SecretStr(clean_db)),
        redis=QueueSettings(url=clean_redis, queue="javakb:test:nogitlab"),
        qdrant=QdrantSettings(path=":memory:"),
    )
    async with open_service(settings) as deps:
        event = SyncRequested(
            event=GitLabEvent.PUSH,
            project_id=7,
            repo_path="acme/x",
            default_branch="main",
            ref="refs/heads/main",
            after="a" * 40,
        )
        assert (await DeliveryRecorder(deps).handle(event, "k"))[0] == "enqueued"
        assert await sync_project({"deps": deps}, 7) == NO_GITLAB
        row = await deps.db.project(7)
    assert row is not None
    assert (row.status, row.last_error, row.done_gen, row.requested_gen) == ("failed", NO_GITLAB, 0, 1)
