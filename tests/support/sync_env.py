"""A whole sync stack for scenario tests: fake GitLab over real git, real PostgreSQL, Redis and arq,
embedded Qdrant, and the receiver's own handling code; plus the audit that compares the index with
the git tree at the head.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from qdrant_client import models as qm

from app.deps import Deps, open_deps
from app.settings import (
    ChunkingSettings,
    EmbeddingSettings,
    GitLabSettings,
    PostgresSettings,
    QdrantSettings,
    RedisSettings,
    ScopeSettings,
    Settings,
    WorkerSettings,
)
from app.worker import build_worker
from hooks.events import parse_event
from hooks.receiver import Receiver
from pipeline.chunking import chunk_source
from pipeline.model import SourceContext
from pipeline.scope import Scope
from tests.support.fake_gitlab import FakeGitLab, FakeProject
from tests.support.git_repo import GitRepo, TreeEntry


def push_payload(project: FakeProject, after: str, *, before: str = "0" * 40, ref: str | None = None) -> dict[str, Any]:
    """A system-hook push body as GitLab builds it (`Gitlab::DataBuilder::Push`)."""
    return {
        "object_kind": "push",
        "event_name": "push",
        "before": before,
        "after": after,
        "ref": ref or f"refs/heads/{project.default_branch}",
        "checkout_sha": after,
        "project_id": project.id,
        "project": {"path_with_namespace": project.path_with_namespace, "default_branch": project.default_branch},
        "commits": [],
        "total_commits_count": 0,
    }


@dataclass
class SyncEnv:
    """Drives deliveries and the worker, and audits the result."""

    deps: Deps
    settings: Settings
    gitlab: FakeGitLab
    receiver: Receiver = field(init=False)

    def __post_init__(self) -> None:
        self.receiver = Receiver(self.deps)

    async def deliver(self, body: dict[str, Any], key: str | None = None) -> str:
        """Handle one delivery exactly as the receiver does after authentication; return its outcome."""
        outcome, _ = await self.receiver.handle(parse_event(body), key or uuid.uuid4().hex)
        return outcome

    async def push(self, project: FakeProject, files: dict[str, str | bytes | None], message: str = "change") -> str:
        """Commit to the default branch and deliver the push hook; return the new head."""
        before = _head_or_zero(project)
        sha = project.commit(files, message)
        await self.deliver(push_payload(project, sha, before=before))
        return sha

    async def work(self, rounds: int = 20) -> None:
        """Run burst workers until the queue (deferred retries included) stays empty.

        A burst worker returns once the queue is empty, even when a job it is still finishing raises
        `Retry` and re-enqueues itself a moment later, so one burst is not always enough.
        """
        queue = self.deps.require_queue()
        for _ in range(rounds):
            worker = build_worker(self.settings, self.deps, burst=True, handle_signals=False)
            await worker.main()
            if await queue.zcard(self.settings.redis.queue) == 0:
                return
        raise AssertionError("the queue did not drain")

    async def runs(self, project_id: int) -> list[dict[str, Any]]:
        """Sync runs that did work (not no-ops), oldest first."""
        rows = await self.deps.require_db().runs(project_id)
        return [r for r in reversed(rows) if r["mode"] != "noop"]

    async def points(self, project_id: int) -> dict[str, dict[str, Any]]:
        """Every point of a project: id → payload."""
        where = qm.Filter(must=[qm.FieldCondition(key="gitlab_project_id", match=qm.MatchValue(value=project_id))])
        return {str(r.id): r.payload or {} async for r in self.deps.store.scroll(where, True)}

    async def audit(self, project: FakeProject) -> None:
        """The index equals the default branch head: no missing, stale or duplicate chunk, state advanced."""
        head = project.head()
        row = await self.deps.require_db().project(project.id)
        assert row is not None
        assert row.indexed_sha == head, f"indexed {row.indexed_sha}, head {head}"
        assert row.repo_path == project.path_with_namespace
        expected = expected_chunks(project.repo, head, project, self.settings)
        actual = await self.points(project.id)
        missing = set(expected) - set(actual)
        stale = set(actual) - set(expected)
        assert not missing and not stale, f"missing {sorted(missing)[:5]}, stale {sorted(stale)[:5]}"
        for point_id, content_hash in expected.items():
            payload = actual[point_id]
            assert payload["content_hash"] == content_hash
            assert payload["repo_path"] == project.path_with_namespace
        manifest = await self.deps.require_db().manifest(project.id)
        scope = Scope.from_config(self.settings.chunking.to_config())
        assert set(manifest) == {e.path for e in blobs(project.repo, head) if scope.matches(e.path)}


def _head_or_zero(project: FakeProject) -> str:
    try:
        return project.head()
    except Exception:  # an unborn branch has no head yet
        return "0" * 40


def blobs(repo: GitRepo, sha: str) -> list[TreeEntry]:
    """Every blob of a commit."""
    return [e for e in repo.ls_tree(sha, recursive=True) if e.type == "blob"]


def expected_chunks(repo: GitRepo, sha: str, project: FakeProject, settings: Settings) -> dict[str, str]:
    """Chunk id → content hash of every in-scope file at `sha`, chunked locally from git."""
    config = settings.chunking.to_config()
    scope = Scope.from_config(config)
    context = SourceContext(
        repo_path=project.path_with_namespace,
        gitlab_project_id=project.id,
        commit_sha=sha,
        branch=project.default_branch,
    )
    expected: dict[str, str] = {}
    for entry in blobs(repo, sha):
        if scope.matches(entry.path):
            result = chunk_source(repo.read_blob(entry.sha), entry.path, context, config)
            for chunk in result.chunks:
                assert chunk.id not in expected, f"duplicate id {chunk.id}"
                expected[chunk.id] = chunk.content_hash
    return expected


@asynccontextmanager
async def sync_env(
    tmp_path: Path,
    pg_dsn: str,
    redis_url: str,
    *,
    embedding_url: str | None = None,
    chunking: ChunkingSettings | None = None,
    worker: WorkerSettings | None = None,
    gitlab_token: str | None = None,
    scope: ScopeSettings | None = None,
) -> AsyncIterator[SyncEnv]:
    """The whole stack, torn down on exit.

    `chunking`, `worker` and `scope` replace those settings; `gitlab_token` is the token the service sends
    (the fake only accepts its own, so any other one is refused with 401).
    """
    with FakeGitLab(tmp_path) as gitlab:
        token = gitlab.token if gitlab_token is None else gitlab_token
        settings = Settings(
            postgres=PostgresSettings(dsn=SecretStr(pg_dsn)),
            redis=RedisSettings(url=redis_url, queue=f"javakb:test:{uuid.uuid4().hex[:8]}"),
            qdrant=QdrantSettings(path=":memory:"),
            gitlab=GitLabSettings(url=gitlab.url, token=SecretStr(token), webhook_secret=SecretStr("x")),
            embedding=EmbeddingSettings(base_url=embedding_url, model="fake", max_retries=1, max_backoff_s=0.05),
            chunking=chunking or ChunkingSettings(),
            worker=worker or WorkerSettings(max_jobs=4, files_per_batch=8),
            scope=scope or ScopeSettings(),
        )
        async with open_deps(settings, with_db=True, with_queue=True, with_gitlab=True) as deps:
            await deps.store.ensure(await deps.index_model())
            yield SyncEnv(deps=deps, settings=settings, gitlab=gitlab)
