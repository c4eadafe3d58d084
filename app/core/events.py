"""The events the indexer acts on: value types that the edge produces and the services consume.

`hooks.events.parse_event` turns a GitLab payload into one of these; the recording (`app.sync.deliveries`),
the scope (`app.sync.scope`) and PostgreSQL (`app.db`) read them. They live below all three so that no
import runs back up from an adapter to the receiver.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

MAX_ID = 2**63 - 1  # ids are PostgreSQL bigints (GitLab's own ids are bigint too)


class GitLabEvent(enum.StrEnum):
    """The hook events the indexer acts on, as GitLab names them in `event_name` (or `object_kind`).

    Members are their strings: `deliveries.event`, `index_jobs.trigger` and the logs keep GitLab's
    spelling. An event of any other name is `Ignored`, which keeps the name as sent.
    """

    PUSH = "push"
    REPOSITORY_UPDATE = "repository_update"
    PROJECT_DESTROY = "project_destroy"
    PROJECT_RENAME = "project_rename"
    PROJECT_TRANSFER = "project_transfer"
    PROJECT_UPDATE = "project_update"


MOVE_EVENTS = frozenset({GitLabEvent.PROJECT_RENAME, GitLabEvent.PROJECT_TRANSFER})
"""The events that change a project's path."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncRequested:
    """A push to a project's default branch: sync the index to (at least) `after`."""

    event: GitLabEvent
    project_id: int
    repo_path: str
    default_branch: str | None
    ref: str
    after: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectDestroyed:
    """The project is gone: purge its points and state."""

    event: GitLabEvent
    project_id: int
    repo_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectMoved:
    """A rename or a transfer: rewrite repo_path, no re-embedding."""

    event: GitLabEvent
    project_id: int
    old_path: str
    new_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectUpdated:
    """Settings changed; the default branch may have (the payload does not say): check through the API."""

    event: GitLabEvent
    project_id: int
    repo_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Ignored:
    """A delivery we answer and drop, with the reason (`event` as sent: any name GitLab has)."""

    event: str
    reason: str
    project_id: int | None = None


Event = SyncRequested | ProjectDestroyed | ProjectMoved | ProjectUpdated | Ignored
