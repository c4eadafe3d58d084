"""What the operator's page shows, read with the queries the admin API and `index_status` already use.

Projects come from the query behind `app.sync.status.index_status` (`Database.statuses`, as an admin:
every project), read twice: every project's state without the manifest counts, then the listed ones
(`MAX_ROWS`, those needing attention first) with them; at 5,000 projects of 200 files that is what keeps
a refresh well under a second (docs/performance.md). Running syncs and backfills come from the admin
API's lists and reports (`app.rest.reports`), the queue's depth from Redis (`app.jobs.redis.queue_head`,
as `/metrics`), the index's model and size from the store. A part that cannot be read (PostgreSQL, Redis
or Qdrant down) is named in `unavailable` and the rest is still shown.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TypeVar

from app.core.errors import ServiceError
from app.core.states import BackfillStatus, ProjectStatus, RunStatus
from app.db import Database
from app.jobs.redis import queue_head
from app.rest.reports import backfill_report, job_state
from app.rest.schemas import BackfillReport, JobState
from app.runtime import ServiceDeps
from app.sync.local_project import check_local_heads
from app.sync.status import StatusItem, status_item
from pipeline.model import ChunkerConfig

LISTED = 100  # running syncs or open backfills listed at most (the admin API pages through the rest)
MAX_ROWS = 200  # projects listed at most, those needing attention first (GET /admin/projects lists all)
T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueFacts:
    """The arq queue: jobs waiting, and how long the oldest due one has waited (seconds)."""

    depth: int
    oldest_due_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFacts:
    """The index: the model its vectors are made with, and its points (chunks)."""

    model: str
    points: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Projects:
    """The projects part: a few listed in full, every one counted by state."""

    listed: list[StatusItem] = field(default_factory=list)  # attention first, `MAX_ROWS` at most
    states: dict[str, int] = field(default_factory=dict)  # every project, by shown state
    repos: dict[int, str] = field(default_factory=dict)  # project id -> path, of every project

    @property
    def total(self) -> int:
        """How many projects there are."""
        return sum(self.states.values())


def listing(every: list[StatusItem]) -> Projects:
    """Every project's status to the part the page shows (pure)."""
    return Projects(
        listed=attention_first(every)[:MAX_ROWS],
        states=state_counts(every),
        repos={p["project_id"]: p["repo"] for p in every},
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusModel:
    """Everything the page shows, at `at` (this process's clock, UTC)."""

    at: datetime
    projects: Projects = field(default_factory=Projects)
    syncs: list[JobState] = field(default_factory=list)
    backfills: list[BackfillReport] = field(default_factory=list)
    queue: QueueFacts | None = None
    index: IndexFacts | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # part -> why it could not be read


async def read_status(deps: ServiceDeps, clock: Callable[[], float] = time.time) -> StatusModel:
    """The page's model; each part read on its own, a failing part named in `unavailable`."""
    now = clock()
    unavailable: dict[str, str] = {}

    async def part(name: str, read: Callable[[], Awaitable[T]]) -> T | None:
        try:
            return await read()
        except ServiceError as exc:  # StorageError, QueueUnavailableError, a store's error
            unavailable[name] = str(exc)
            return None

    projects = await part("projects", lambda: read_projects(deps.db, deps.settings.chunking.to_config()))
    syncs = await part("syncs", lambda: _running_syncs(deps))
    backfills = await part("backfills", lambda: _open_backfills(deps))
    queue = await part("queue", lambda: _queue(deps, now))
    index = await part("index", lambda: _index(deps))
    return StatusModel(
        at=datetime.fromtimestamp(now, tz=UTC),
        projects=projects or Projects(),
        syncs=syncs or [],
        backfills=backfills or [],
        queue=queue,
        index=index,
        unavailable=unavailable,
    )


async def read_projects(db: Database, local: ChunkerConfig | None = None) -> Projects:
    """Every project's state without the manifest counts, then the listed ones again with them: two statements.

    With `local` (the chunker's config), local working trees are checked first, as `index_status` does.
    """
    if local is not None:
        await check_local_heads(db, local)
    view = listing([status_item(r) for r in await db.statuses(everything=True, counts=False)])
    rows = await db.statuses(everything=False, ids=[p["project_id"] for p in view.listed])
    counted = {r.id: status_item(r) for r in rows}
    return replace(view, listed=[counted.get(p["project_id"], p) for p in view.listed])


def state_counts(projects: Iterable[StatusItem]) -> dict[str, int]:
    """Projects by shown state."""
    counts: dict[str, int] = {}
    for p in projects:
        counts[p["state"]] = counts.get(p["state"], 0) + 1
    return counts


def attention_first(projects: Iterable[StatusItem]) -> list[StatusItem]:
    """Failed first, then the furthest behind (and the syncing), then the rest by path."""

    def key(p: StatusItem) -> tuple[int, float, str]:
        rank = 0 if p["state"] == ProjectStatus.FAILED else 1 if p["behind"] or p["syncing"] else 2
        return rank, -(p["lag_seconds"] or 0.0), p["repo"]

    return sorted(projects, key=key)


async def _running_syncs(deps: ServiceDeps) -> list[JobState]:
    return [job_state(r) for r in await deps.db.runs_page(RunStatus.RUNNING, 0, LISTED)]


async def _open_backfills(deps: ServiceDeps) -> list[BackfillReport]:
    reports = []
    for status in (BackfillStatus.RUNNING, BackfillStatus.QUEUED):
        for summary in await deps.db.backfills_page(status, 0, LISTED):
            row = await deps.db.backfill(summary["id"])
            if row is not None:  # deleted since it was listed
                reports.append(await backfill_report(deps.db, row, []))
    return reports


async def _queue(deps: ServiceDeps, now: float) -> QueueFacts:
    depth, oldest_ms = await queue_head(deps.queue, deps.settings.redis.queue, now * 1000)
    return QueueFacts(depth=depth, oldest_due_s=max(0.0, now - oldest_ms / 1000) if oldest_ms is not None else 0.0)


async def _index(deps: ServiceDeps) -> IndexFacts:
    model = await deps.index_model()
    return IndexFacts(model=model.describe(), points=await deps.store.count())
