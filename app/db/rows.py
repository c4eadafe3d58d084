"""The rows the PostgreSQL adapter answers with, as frozen values."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.events import SyncRequested
from app.core.states import ProjectStatus

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRow:
    """One project's sync state."""

    id: int
    repo_path: str
    default_branch: str | None
    indexed_sha: str | None
    target_sha: str | None
    requested_gen: int
    done_gen: int
    full_sync: bool
    force_embed: bool = False  # the next run embeds unchanged chunks again (a forced backfill)
    status: str
    last_error: str | None
    indexed_at: datetime | None
    visibility: str | None
    repository_access: str | None
    source: str = "gitlab"  # `ProjectSource`: where the code comes from
    local_root: str | None = None  # a local project's working tree

    @property
    def behind(self) -> bool:
        """Whether a requested sync is not indexed yet (a delivery, a full reindex)."""
        return self.requested_gen > self.done_gen or self.full_sync

    @property
    def state(self) -> str:
        """The status to show: `ok` only when nothing requested is waiting, else `pending`.

        The stored status is what the last run ended with; a delivery that arrived since (or whose
        job Redis lost) leaves it `ok` while the index is behind, which is not the truth.
        """
        return shown_state(self.status, behind=self.behind)


def shown_state(status: str, *, behind: bool) -> str:
    """The status to show for a stored status (`ProjectRow.state`): `ok` while something waits is `pending`."""
    return ProjectStatus.PENDING if status == ProjectStatus.OK and behind else status


@dataclass(frozen=True, slots=True, kw_only=True)
class Opened:
    """A backfill or rebuild just opened: its id and the token its job ids carry (`app.jobs.queue`)."""

    id: int
    job_token: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadSeen:
    """A project as the reconcile sweep compares it with GitLab's listing."""

    id: int
    repo_path: str
    default_branch: str | None
    indexed_sha: str | None
    head_checked_at: datetime | None
    behind: bool  # deliveries not synced yet: a sync is due anyway
    out_of_scope: bool  # purged for leaving the indexing scope: nothing to compare until it comes back


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepMarks:
    """PostgreSQL's clock at a sweep's start, and when the sweep last listed some and all projects."""

    now: datetime
    listed_at: datetime | None
    full_at: datetime | None


@dataclass(slots=True, kw_only=True)
class JobCounts:
    """What one sync run did, as stored in `index_jobs` (accumulated batch by batch while it runs)."""

    files_changed: int = 0
    files_parsed: int = 0
    files_skipped: int = 0
    files_deleted: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0


KeyedPush = tuple[str, SyncRequested]
"""A push delivery as the receiver records it: (idempotency key, the push)."""


def project_row(row: Any) -> ProjectRow:
    """A `ProjectRow` from a `projects` row."""
    return ProjectRow(**{name: row[name] for name in ProjectRow.__dataclass_fields__})


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusRow:
    """One project's status as PostgreSQL knows it: sync state, GitLab's last reported head, counts, last run."""

    now: datetime  # PostgreSQL's clock, which stamped every time below
    id: int
    repo_path: str
    source: str
    default_branch: str | None
    indexed_sha: str | None
    indexed_at: datetime | None
    head_sha: str | None
    head_checked_at: datetime | None
    behind_since: datetime | None
    lag_commits: int | None
    status: str
    last_error: str | None
    requested_gen: int
    done_gen: int
    full_sync: bool
    files: int
    chunks: int
    run_status: str | None
    run_trigger: str | None
    run_mode: str | None
    run_error: str | None
    run_finished_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexRequestRow:
    """One on-demand sync request (`index_requests`)."""

    id: int
    project_id: int
    commit_sha: str | None
    source: str
    requested_by: str
    generation: int | None
    detail: str | None
    created_at: datetime


def dataclass_row(cls: type[T], row: Any) -> T:
    """A frozen row dataclass from an asyncpg record with (at least) its fields."""
    return cls(**{f.name: row[f.name] for f in fields(cls)})
