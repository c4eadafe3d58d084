"""The events the indexer acts on: value types that the edge produces and the services consume.

`hooks.events.parse_event` turns a GitLab payload into one of these; the recording (`app.deliveries`),
the scope (`app.scope`) and PostgreSQL (`app.db`) read them. They live below all three so that no
import runs back up from an adapter to the receiver.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_ID = 2**63 - 1  # ids are PostgreSQL bigints (GitLab's own ids are bigint too)


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncRequested:
    """A push to a project's default branch: sync the index to (at least) `after`."""

    event: str
    project_id: int
    repo_path: str
    default_branch: str | None
    ref: str
    after: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectDestroyed:
    """The project is gone: purge its points and state."""

    event: str
    project_id: int
    repo_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectMoved:
    """A rename or a transfer: rewrite repo_path, no re-embedding."""

    event: str
    project_id: int
    old_path: str
    new_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectUpdated:
    """Settings changed; the default branch may have (the payload does not say): check through the API."""

    event: str
    project_id: int
    repo_path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Ignored:
    """A delivery we answer and drop, with the reason."""

    event: str
    reason: str
    project_id: int | None = None


Event = SyncRequested | ProjectDestroyed | ProjectMoved | ProjectUpdated | Ignored
