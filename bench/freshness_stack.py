"""The sync stack `bench.freshness` and `bench.heal` run in one process: the fake GitLab over real git,
PostgreSQL, Redis and arq, embedded Qdrant and the stub embedder, with the sync's steps timed by
stand-ins injected into `open_deps` (`StepTimer`); plus delivering a push and waiting for its run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from pydantic import SecretStr
from redis.asyncio import Redis

from app.auth.access import LOCAL
from app.core.settings import (
    EmbeddingSettings,
    GitLabSettings,
    PostgresSettings,
    QdrantSettings,
    QueueSettings,
    Settings,
    SyncWorkerSettings,
)
from app.runtime import SyncDeps
from app.sync.deliveries import DeliveryRecorder
from bench.common import REDIS_SERVER, STUB_DIM, STUB_MODEL, StubServer, timed_async
from entry.deps import open_sync
from entry.worker import build_worker
from hooks.events import parse_event
from pipeline.chunking import chunk_source
from pipeline.model import SourceContext
from testkit.fake_gitlab import FakeGitLab, FakeProject
from testkit.standins import Around, ByRole
from testkit.sync_env import push_payload

PROJECT_PATH: Final = "acme/platform-monolith"


class StepTimer:
    """Wall time spent inside chosen async methods of the sync's collaborators (timed stand-ins from `open_deps`).

    Calls that overlap (the initial index fetches 8 files at once) add up to more than the wall time.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.calls: dict[str, int] = collections.defaultdict(int)

    def wrap(self) -> ByRole:
        """`open_deps(wrap=...)` timing `SYNC_STEPS` on the parts that have them."""
        by_role: dict[str, dict[str, Around]] = collections.defaultdict(dict)
        for role, method, label in SYNC_STEPS:
            by_role[role][method] = timed_async(self._recorder(label))
        return ByRole(by_role)

    def _recorder(self, label: str) -> Callable[[float, tuple[Any, ...]], None]:
        def record(seconds: float, _args: tuple[Any, ...]) -> None:
            self.seconds[label] += seconds
            self.calls[label] += 1

        return record

    def take(self) -> dict[str, dict[str, float]]:
        """Seconds and calls per step since the last `take`."""
        order = sorted(self.seconds, key=lambda k: -self.seconds[k])
        out = {k: {"seconds": self.seconds[k], "calls": float(self.calls[k])} for k in order}
        self.seconds.clear()
        self.calls.clear()
        return out


SYNC_STEPS: Final = (  # (role in open_deps, method, label) of what a sync run awaits
    ("gitlab", "project", "GitLab: project"),
    ("gitlab", "branch_head", "GitLab: branch head"),
    ("gitlab", "compare", "GitLab: compare"),
    ("gitlab", "tree", "GitLab: tree"),
    ("gitlab", "raw_file", "GitLab: raw file"),
    ("gitlab", "raw_blob", "GitLab: raw blob"),
    ("store", "stored_hashes", "Qdrant: stored_hashes (filtered scroll)"),
    ("store", "upsert", "Qdrant: upsert"),
    ("store", "set_payloads", "Qdrant: set_payloads (refresh)"),
    ("store", "set_payload_where", "Qdrant: set_payload_where (re-cite, move)"),
    ("store", "stored_state", "Qdrant: stored_state (filtered scroll)"),
    ("store", "delete_ids", "Qdrant: delete_ids"),
    ("embedder", "embed", "embedding HTTP"),
    ("db", "start_run", "PostgreSQL: run bookkeeping"),
    ("db", "finish_run", "PostgreSQL: run bookkeeping"),
    ("db", "set_status", "PostgreSQL: run bookkeeping"),
    ("db", "mark_synced", "PostgreSQL: run bookkeeping"),
    ("db", "update_manifest", "PostgreSQL: manifest"),
)


@dataclass
class Stack:
    deps: SyncDeps
    settings: Settings
    gitlab: FakeGitLab
    stub: StubServer
    redis: Redis
    steps: StepTimer
    lookup_ms: list[float] = field(default_factory=list)


def endpoint_of(path: str) -> str:
    """A GitLab API path → the endpoint it calls."""
    rules = (
        (r"/repository/compare", "GET compare"),
        (r"/repository/tree", "GET tree"),
        (r"/repository/files/.+/raw", "GET files/:path/raw"),
        (r"/repository/blobs/.+/raw", "GET blobs/:sha/raw"),
        (r"/repository/branches/", "GET branches/:name"),
        (r"^/api/v4/projects/[^/]+$", "GET projects/:id"),
    )
    for pattern, name in rules:
        if re.search(pattern, path):
            return name
    return re.sub(r"/\d+", "/:id", path)


def calls_since(gitlab: FakeGitLab, start: int) -> dict[str, int]:
    with gitlab.lock:
        new = list(gitlab.calls[start:])
    return dict(collections.Counter(endpoint_of(path) for _method, path in new).most_common())


@contextlib.asynccontextmanager
async def open_stack(
    args: argparse.Namespace,
    dsn: str,
    tmp: Path,
    *,
    worker: SyncWorkerSettings | None = None,
    gitlab_clock: Callable[[], datetime] | None = None,
) -> AsyncIterator[Stack]:
    redis_url = f"{REDIS_SERVER}/{args.redis_db}"
    redis = Redis.from_url(redis_url)
    try:
        if await redis.dbsize():
            raise SystemExit(f"error: Redis database {args.redis_db} is not empty; pass another --redis-db")
        stub = StubServer(STUB_DIM, nodelay=not args.keep_nagle)
        try:
            with FakeGitLab(tmp, clock=gitlab_clock, nodelay=not args.keep_nagle) as gitlab:
                qdrant = ":memory:" if args.qdrant_memory else str(tmp / "qdrant")
                settings = Settings(
                    postgres=PostgresSettings(dsn=SecretStr(dsn)),
                    redis=QueueSettings(url=redis_url, queue=f"javakb:bench:{uuid.uuid4().hex[:8]}"),
                    qdrant=QdrantSettings(path=qdrant, engine=args.engine),
                    gitlab=GitLabSettings(url=gitlab.url, token=SecretStr(gitlab.token), webhook_secret=SecretStr("x")),
                    embedding=EmbeddingSettings(base_url=stub.base_url, model=STUB_MODEL),
                    worker=worker or SyncWorkerSettings(),
                )
                steps = StepTimer()
                wrap = steps.wrap()
                async with open_sync(settings, wrap=wrap) as deps:
                    await deps.store.ensure(await deps.index_model())
                    steps.take()  # what the first ensure took is not a sync's
                    yield Stack(deps=deps, settings=settings, gitlab=gitlab, stub=stub, redis=redis, steps=steps)
        finally:
            stub.close()
    finally:
        with contextlib.suppress(Exception):
            await redis.flushdb()
        await redis.aclose()


@contextlib.asynccontextmanager
async def running_worker(stack: Stack, poll_delay: float) -> AsyncIterator[None]:
    """A real arq worker, not burst, polling every `poll_delay` seconds, for the block's duration."""
    worker = build_worker(stack.settings, stack.deps, handle_signals=False)
    worker.poll_delay_s = poll_delay
    task = asyncio.create_task(worker.async_run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await worker.close()


async def deliver(stack: Stack, project: FakeProject, before: str, after: str) -> float:
    """What POST /hooks/gitlab does after authentication; returns the seconds it took."""
    t0 = time.perf_counter()
    event = parse_event(push_payload(project, after, before=before))
    outcome, _ = await DeliveryRecorder(stack.deps).handle(event, uuid.uuid4().hex)
    if outcome != "enqueued":
        raise RuntimeError(f"the delivery was {outcome}")
    return time.perf_counter() - t0


async def wait_synced(stack: Stack, project_id: int, head: str, timeout: float) -> dict[str, Any]:
    """Until the project is synced to `head` and its last run is closed; that run's `index_jobs` row."""
    db = stack.deps.db
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = await db.project(project_id)
        if row is not None and row.indexed_sha == head and row.done_gen >= row.requested_gen:
            runs = [r for r in await db.runs(project_id) if r["to_sha"] == head and r["finished_at"] is not None]
            busy = await db.pool.fetchval(
                "SELECT count(*) FROM index_jobs WHERE project_id = $1 AND finished_at IS NULL", project_id
            )
            if runs and not busy:
                return runs[0]
        await asyncio.sleep(0.02)
    raise TimeoutError(f"project {project_id} was not synced to {head[:10]} within {timeout:.0f} s")


async def searchable(stack: Stack, target: Expected, t0: float, args: argparse.Namespace) -> float | None:
    """Poll every `--poll-every` s until the changed method's new chunk is returned; seconds from `t0`.

    `--poll symbol` calls `deps.search.symbol(qualified name)`. On embedded Qdrant each such call scans every
    point in Python on this event loop, which the sync job needs too, so by default (`--poll probe`) the poll
    reads the chunk's point by id (a dict lookup; the id stays, the content hash changes) and `symbol()` is
    called once the run has closed, to confirm that the search returns the new chunk.
    """
    deadline = t0 + args.timeout
    store = stack.deps.store
    while True:
        started = time.perf_counter()
        if args.poll == "probe":
            records = await store.retrieve([target.chunk_id], ["content_hash"])
            found = any((r.payload or {}).get("content_hash") == target.content_hash for r in records)
        else:
            found = await symbol_returns(stack, target)
        now = time.perf_counter()
        if found:
            return now - t0
        if now > deadline:
            return None
        await asyncio.sleep(max(0.0, args.poll_every - (now - started)))


async def symbol_returns(stack: Stack, target: Expected) -> bool:
    """Whether `deps.search.symbol(qualified name)` returns the chunk with the new content hash (timed)."""
    started = time.perf_counter()
    hits = await stack.deps.search.symbol(LOCAL, target.qualified_name)
    stack.lookup_ms.append((time.perf_counter() - started) * 1e3)
    return any(h.id == target.chunk_id and h.chunk.content_hash == target.content_hash for h in hits)


@dataclass(frozen=True, slots=True)
class Expected:
    """The changed method's new chunk."""

    qualified_name: str
    chunk_id: str
    content_hash: str


def expected_chunk(text: str, path: str, qualified_name: str, context: SourceContext, settings: Settings) -> Expected:
    result = chunk_source(text.encode(), path, context, settings.chunking.to_config())
    for chunk in result.chunks:
        if chunk.qualified_name == qualified_name and chunk.part_index == 0:
            return Expected(qualified_name, chunk.id, chunk.content_hash)
    raise ValueError(f"{qualified_name} has no chunk in {path}")


def commit_all(project: FakeProject, sources: dict[str, str], message: str) -> str:
    """Write every file and commit them in one go (one `git add -A`, not one per file)."""
    for rel, text in sources.items():
        target = project.repo_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    project.repo.run("add", "-A")
    return project.repo.commit_index(message)
