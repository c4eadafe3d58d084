"""End-to-end sync scenarios: fake GitLab over real git, real PostgreSQL/Redis/arq, embedded Qdrant.

After each scenario `audit` compares the index with the git tree at the head.
"""

from __future__ import annotations

from pathlib import Path

from testkit.fake_embedder import FakeEmbeddingServer
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.support.sources import repo_service_java as service

SRC = "src/main/java/com/acme/"


async def test_first_push_indexes_everything(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B"), "README.md": "hi"})
    await env.work()
    await env.audit(project)
    [run] = await env.runs(project.id)
    assert (run["mode"], run["status"], run["files_changed"]) == ("archive", "DONE", 2)


async def test_add_modify_delete_rename(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B"), SRC + "C.java": service("C")})
    await env.work()
    await env.push(
        project, {SRC + "D.java": service("D"), SRC + "A.java": service("A", "return 2;"), SRC + "B.java": None}
    )
    project.rename(SRC + "C.java", SRC + "sub/C.java", "move C")
    await env.deliver(push_payload(project, project.head()))
    await env.work()
    await env.audit(project)
    modes = [r["mode"] for r in await env.runs(project.id)]
    assert modes[0] == "archive" and set(modes[1:]) == {"compare"}


async def test_rename_moves_points_without_re_embedding(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    with FakeEmbeddingServer(dim=16) as embedder:
        async with sync_env(tmp_path, clean_db, clean_redis, embedding_url=embedder.base_url) as env:
            project = env.gitlab.create_project("acme/shop")
            await env.push(project, {SRC + "A.java": service("A")})
            await env.work()
            sent_before = embedder.inputs_total
            project.rename(SRC + "A.java", SRC + "moved/A.java", "move A")
            await env.deliver(push_payload(project, project.head()))
            await env.work()
            await env.audit(project)
            assert embedder.inputs_total == sent_before  # every chunk kept its vector


async def test_force_push_rewrites_history(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    base = await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    await env.push(project, {SRC + "B.java": service("B")})
    await env.work()
    project.force_reset("main", base)  # B.java disappears from history
    await env.push(project, {SRC + "C.java": service("C")})
    await env.work()
    await env.audit(project)


async def test_a_25_commit_push_is_one_sync(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    before = project.head()
    for i in range(25):
        project.commit({SRC + f"Gen{i}.java": service(f"Gen{i}")}, f"commit {i}")
    await env.deliver(push_payload(project, project.head(), before=before))
    await env.work()
    await env.audit(project)
    assert len(await env.runs(project.id)) == 2


async def test_a_push_to_another_branch_is_ignored(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    project.create_branch("feature", project.head())
    sha = project.commit({SRC + "F.java": service("F")}, "feature work", branch="feature")
    outcome = await env.deliver(push_payload(project, sha, ref="refs/heads/feature"))
    assert outcome == "ignored"
    await env.work()
    await env.audit(project)
    assert len(await env.runs(project.id)) == 1


async def test_a_duplicate_delivery_runs_once(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    sha = project.commit({SRC + "A.java": service("A")}, "a")
    assert await env.deliver(push_payload(project, sha), key="same") == "enqueued"
    assert await env.deliver(push_payload(project, sha), key="same") == "duplicate"
    await env.work()
    await env.audit(project)
    assert len(await env.runs(project.id)) == 1


async def test_out_of_order_deliveries_never_move_the_index_backwards(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    old = project.commit({SRC + "A.java": service("A")}, "a")
    new = project.commit({SRC + "B.java": service("B")}, "b")
    await env.deliver(push_payload(project, new))  # the newer push arrives first
    await env.work()
    await env.deliver(push_payload(project, old))  # the older one arrives late
    await env.work()
    await env.audit(project)


async def test_a_burst_of_100_pushes_ends_at_the_last_head_in_at_most_3_runs(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    for i in range(100):
        sha = project.commit({SRC + f"P{i % 7}.java": service(f"P{i % 7}", f"return {i};")}, f"push {i}")
        await env.deliver(push_payload(project, sha))
    await env.work()
    await env.audit(project)
    assert len(await env.runs(project.id)) <= 3


async def test_gitlab_errors_then_recovery(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    env.gitlab.fail_next(2, status=500)
    env.gitlab.fail_next(1, status=429, retry_after="0")
    await env.work()
    await env.audit(project)


async def test_embedding_down_then_up_converges(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    with FakeEmbeddingServer(dim=16) as embedder:
        async with sync_env(tmp_path, clean_db, clean_redis, embedding_url=embedder.base_url) as env:
            project = env.gitlab.create_project("acme/shop")
            await env.push(project, {SRC + "A.java": service("A")})
            await env.work()
            await env.push(project, {SRC + "A.java": service("A", "return 3;")})
            embedder.fail_next(4, status=503)  # more than the client's retries: the job must retry
            await env.work()
            await env.audit(project)
            row = await env.deps.db.project(project.id)
            assert row is not None and row.status == "ok" and row.last_error is None


async def test_rename_transfer_and_destroy(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.rename_project(project.id, "store")
    rename = {
        "event_name": "project_rename",
        "project_id": project.id,
        "path_with_namespace": "acme/store",
        "old_path_with_namespace": "acme/shop",
    }
    assert await env.deliver(rename) == "enqueued"
    await env.work()
    assert {p["repo_path"] for p in (await env.points(project.id)).values()} == {"acme/store"}
    env.gitlab.transfer_project(project.id, "platform")
    transfer = rename | {"event_name": "project_transfer", "path_with_namespace": "platform/store"}
    transfer["old_path_with_namespace"] = "acme/store"
    await env.deliver(transfer)
    await env.work()
    await env.push(project, {SRC + "B.java": service("B")})
    await env.work()
    await env.audit(project)
    # GitLab sends project_destroy after the project is gone (`Projects::DestroyService#execute`).
    env.gitlab.delete_project(project.id)
    destroy = {"event_name": "project_destroy", "project_id": project.id, "path_with_namespace": "platform/store"}
    await env.deliver(destroy)
    await env.work()
    assert await env.points(project.id) == {}
    assert await env.deps.db.project(project.id) is None
