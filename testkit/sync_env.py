"""A whole sync stack for scenario tests: fake GitLab over real git, real PostgreSQL, Redis and arq,
embedded Qdrant, and the receiver's own handling code; plus the audit that compares the index with
the git tree at the head.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.core.settings import (
    ChunkingSettings,
    EmbeddingSettings,
    GitLabSettings,
    LibrarySettings,
    PostgresSettings,
    QdrantSettings,
    QueueSettings,
    ScopeSettings,
    Settings,
    SyncWorkerSettings,
)
from app.runtime import SyncDeps
from app.sync.deliveries import DeliveryRecorder
from entry.deps import open_sync
from entry.worker import build_worker
from hooks.events import parse_event
from testkit.audit import audit, head_chunks, project_points
from testkit.fake_gitlab import FakeGitLab, FakeProject
from testkit.git_repo import GitRepo
from testkit.payloads import ADMIN, HookProject, PushBody, push_body


def push_payload(project: FakeProject, after: str, *, before: str = "0" * 40, ref: str | None = None) -> PushBody:
    """A push body for `project` as GitLab builds it (`testkit.payloads.push_body`), with no commits."""
    hook_project = HookProject(
        id=project.id,
        name=project.path_with_namespace.rsplit("/", 1)[-1],
        namespace=project.path_with_namespace.split("/", 1)[0],
        path_with_namespace=project.path_with_namespace,
        default_branch=project.default_branch,
    )
    return push_body(hook_project, ADMIN, before=before, after=after, ref=ref or f"refs/heads/{project.default_branch}")


@dataclass
class SyncEnv:
    """Drives deliveries and the worker, and audits the result."""

    deps: SyncDeps
    settings: Settings
    gitlab: FakeGitLab
    receiver: DeliveryRecorder = field(init=False)

    def __post_init__(self) -> None:
        self.receiver = DeliveryRecorder(self.deps)

    async def deliver(self, body: Mapping[str, object], key: str | None = None) -> str:
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
        queue = self.deps.queue
        for _ in range(rounds):
            worker = build_worker(self.settings, self.deps, burst=True, handle_signals=False)
            await worker.main()
            if await queue.zcard(self.settings.redis.queue) == 0:
                return
        raise AssertionError("the queue did not drain")

    async def runs(self, project_id: int) -> list[dict[str, Any]]:
        """Sync runs that did work (not no-ops), oldest first."""
        rows = await self.deps.db.runs(project_id)
        return [r for r in reversed(rows) if r["mode"] != "noop"]

    async def points(self, project_id: int) -> dict[str, dict[str, Any]]:
        """Every point of a project: id → payload."""
        return await project_points(self.deps, project_id)

    async def audit(self, project: FakeProject, *, gone_paths: Iterable[str] = ()) -> None:
        """The index equals the default branch head (`testkit.audit`)."""
        await audit(self.deps, self.deps.db, self.settings, project, gone_paths=gone_paths)


def _head_or_zero(project: FakeProject) -> str:
    try:
        return project.head()
    except Exception:  # an unborn branch has no head yet
        return "0" * 40


def expected_chunks(repo: GitRepo, sha: str, project: FakeProject, settings: Settings) -> dict[str, str]:
    """Chunk id → content hash of every in-scope file at `sha`, chunked locally from git."""
    assert repo is project.repo
    return {chunk_id: chunk.content_hash for chunk_id, chunk in head_chunks(project, sha, settings).items()}


@asynccontextmanager
async def sync_env(
    tmp_path: Path,
    pg_dsn: str,
    redis_url: str,
    *,
    embedding_url: str | None = None,
    chunking: ChunkingSettings | None = None,
    worker: SyncWorkerSettings | None = None,
    gitlab_token: str | None = None,
    scope: ScopeSettings | None = None,
    gitlab_clock: Callable[[], datetime] | None = None,
    next_embedding: EmbeddingSettings | None = None,
    libraries: LibrarySettings | None = None,
) -> AsyncIterator[SyncEnv]:
    """The whole stack, torn down on exit.

    `chunking`, `worker` and `scope` replace those settings; `gitlab_token` is the token the service sends
    (the fake only accepts its own, so any other one is refused with 401); `gitlab_clock` is GitLab's;
    `next_embedding` is the model a rebuild fills its new generation with; `libraries` the dependency
    sources settings (a `testkit.fake_maven.FakeMaven`'s URL among its repositories).
    """
    with FakeGitLab(tmp_path, clock=gitlab_clock) as gitlab:
        token = gitlab.token if gitlab_token is None else gitlab_token
        settings = Settings(
            postgres=PostgresSettings(dsn=SecretStr(pg_dsn)),
            redis=QueueSettings(url=redis_url, queue=f"javakb:test:{uuid.uuid4().hex[:8]}"),
            qdrant=QdrantSettings(path=":memory:"),
            gitlab=GitLabSettings(url=gitlab.url, token=SecretStr(token), webhook_secret=SecretStr("x")),
            embedding=EmbeddingSettings(
                provider=None if embedding_url else "none",  # lexical-only without a (fake) endpoint
                base_url=embedding_url,
                model="fake",
                max_retries=1,
                max_backoff_s=0.05,
            ),
            chunking=chunking or ChunkingSettings(),
            worker=worker or SyncWorkerSettings(max_jobs=4, files_per_batch=8),
            scope=scope or ScopeSettings(),
            next_embedding=next_embedding,
            libraries=libraries or LibrarySettings(),
        )
        async with open_sync(settings) as deps:
            await deps.store.ensure(await deps.index_model())
            yield SyncEnv(deps=deps, settings=settings, gitlab=gitlab)
