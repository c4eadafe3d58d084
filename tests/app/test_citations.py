"""Every chunk cites a commit that is on the default branch now, after force pushes and amends.

The audit (`testkit.audit`) checks each chunk's `commit_sha`: it exists, it is the head or an
ancestor of it, and the chunk's file holds the same lines there as at the head.
"""

from __future__ import annotations

import pytest
from qdrant_client import models as qm

from app.jobs.queue import BACKFILL
from testkit.sync_env import SyncEnv, push_payload
from tests.support.sources import service_java as service

SRC = "src/main/java/com/acme/"


async def cited(env: SyncEnv, project_id: int) -> set[str]:
    return {str(p["commit_sha"]) for p in (await env.points(project_id)).values()}


@pytest.mark.parametrize("pruned", [False, True])
async def test_a_force_push_leaves_no_citation_of_a_rewritten_commit(env: SyncEnv, pruned: bool) -> None:
    project = env.gitlab.create_project("acme/shop")
    base = await env.push(project, {SRC + "A.java": service("A")})
    await env.push(project, {SRC + "B.java": service("B")})
    await env.work()
    rewritten = project.head()
    project.force_reset("main", base)  # history rewritten: B comes back in a new commit, with C
    project.commit({SRC + "B.java": service("B"), SRC + "C.java": service("C")}, "B and C, rebased")
    if pruned:
        project.prune()
        assert project.repo.resolve_commit(rewritten) is None  # GitLab now answers 404 for it
    await env.deliver(push_payload(project, project.head(), before=rewritten))
    await env.work()
    await env.audit(project)
    assert rewritten not in await cited(env, project.id)
    assert [r["mode"] for r in await env.runs(project.id)][-1] == ("tree" if pruned else "compare")


async def test_a_message_only_amend_moves_every_citation(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.push(project, {SRC + "B.java": service("B")})
    await env.work()
    amended_away = project.head()
    project.amend("B, with a better message")
    await env.deliver(push_payload(project, project.head(), before=amended_away))
    await env.work()
    await env.audit(project)
    assert amended_away not in await cited(env, project.id)
    [last] = (await env.runs(project.id))[-1:]
    assert (last["mode"], last["files_changed"], last["chunks_embedded"]) == ("compare", 0, 0)


async def test_a_fast_forward_keeps_the_citations_of_unchanged_chunks(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    first = await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    second = await env.push(project, {SRC + "B.java": service("B")})
    await env.work()
    await env.audit(project)
    assert await cited(env, project.id) == {first, second}  # A's chunks still cite the commit that made them


async def test_a_full_reindex_repairs_citations_when_no_blob_changed(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B")})
    await env.work()
    # The state an earlier version left after a force push: chunks citing a commit that is gone.
    where = qm.Filter(must=[qm.FieldCondition(key="gitlab_project_id", match=qm.MatchValue(value=project.id))])
    await env.deps.store.set_payload_where(where, {"commit_sha": "0" * 40})
    await env.deps.queue.enqueue_job(BACKFILL, [project.id], True)  # POST /admin/reindex {"full": true}
    await env.work()
    await env.audit(project)
    # The reconcile sweep (a cron of the burst workers) may see the drift first on a slow machine and repair
    # it too; the full reindex's own run is the one this test is about.
    [full] = [run for run in await env.runs(project.id) if run["trigger"] == "backfill"]
    assert (full["mode"], full["files_changed"]) == ("tree", 0)


async def test_a_compare_that_keeps_failing_falls_back_to_a_tree_walk(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.fail_next(1000, 502, path_contains="/repository/compare")
    await env.push(project, {SRC + "B.java": service("B"), SRC + "A.java": None})
    await env.work()
    await env.audit(project)
    assert env.gitlab.call_count("/repository/compare") == 3  # META_RETRIES + 1 attempts, in one run
    assert [(r["mode"], r["status"]) for r in await env.runs(project.id)][-1] == ("tree", "DONE")


async def test_an_overflowing_fast_forward_walks_the_tree_but_keeps_citations(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    first = await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    env.gitlab.max_diff_files = 1  # GitLab's `diff_max_files`: the compare comes back `compare_timeout`
    second = await env.push(project, {SRC + "B.java": service("B"), SRC + "C.java": service("C")})
    await env.work()
    await env.audit(project)
    assert (await env.runs(project.id))[-1]["mode"] == "tree"
    assert await cited(env, project.id) == {first, second}  # the compare still showed a fast-forward
