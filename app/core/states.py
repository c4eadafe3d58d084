"""The names of states and outcomes that PostgreSQL stores and the APIs answer: each spelled once.

`StrEnum`s, so a member is its string: what is stored, logged and sent as JSON stays the same text.
The CHECK constraints in `migrations/` and the `Literal`s of `app.rest.schemas` list the same values;
`tests/app/test_names.py` fails when one of them drifts from these.
"""

from __future__ import annotations

import enum

from app.core.events import GitLabEvent


class ProjectStatus(enum.StrEnum):
    """`projects.status`: what the project's last sync run ended with (or is doing)."""

    PENDING = "pending"
    SYNCING = "syncing"
    OK = "ok"
    FAILED = "failed"
    OUT_OF_SCOPE = "out_of_scope"


class RunStatus(enum.StrEnum):
    """`index_jobs.status`: one sync run's state."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"


class SyncMode(enum.StrEnum):
    """`index_jobs.mode`: how a run found what changed (none when it failed before planning)."""

    COMPARE = "compare"  # GitLab's compare between the indexed commit and the head
    TREE = "tree"  # a walk of the whole tree against the manifest
    NOOP = "noop"  # the index is already at the head
    OUT_OF_SCOPE = "out_of_scope"  # the project left the indexing scope: its points were dropped
    ARCHIVE = "archive"  # a first fetch: the repository archive at the head, filtered while streaming


class SyncTrigger(enum.StrEnum):
    """`index_jobs.trigger` of a sync no hook event asked for (a hook's sync stores its `GitLabEvent`)."""

    CONTINUE = "continue"  # the hand-over: a delivery arrived while the last run held the lock
    BACKFILL = "backfill"  # an admin backfill
    RECONCILE = "reconcile"  # the reconcile sweep found the project behind or drifted
    SCOPE = "scope"  # the project left or re-entered the indexing scope
    DEFAULT_BRANCH_CHANGED = "default_branch_changed"  # `project_update` moved the default branch
    INDEX_JOB = "index_job"  # `POST /api/v1/index-jobs` (a CI job, or an index-job token)
    REFRESH = "refresh"  # an agent's `refresh_repo` (MCP)
    LOCAL = "local"  # `javakb index` or `serve --watch` indexed a local checkout


class ProjectSource(enum.StrEnum):
    """`projects.source`: where a project's code comes from (issue 27)."""

    GITLAB = "gitlab"  # GitLab's API: the id is GitLab's, the heads are commits
    LOCAL = "local"  # a working tree on this machine (`projects.local_root`): the heads are tree states


Trigger = GitLabEvent | SyncTrigger
"""Why a sync runs: what `index_jobs.trigger` stores."""


def trigger_of(value: str) -> Trigger | None:
    """The trigger a queued job names, or None for a name this version does not know.

    Jobs carry the plain string, never the enum (arq pickles its arguments): a worker of another
    version reads any job, so web and worker can be upgraded one after the other.
    """
    for kind in (GitLabEvent, SyncTrigger):
        try:
            return kind(value)
        except ValueError:
            continue
    return None


class BackfillStatus(enum.StrEnum):
    """`backfills.status`: an admin backfill's state."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class BackfillOutcome(enum.StrEnum):
    """`backfill_projects.outcome`: what a backfill did for one project."""

    REQUESTED = "requested"
    NOT_FOUND = "not_found"
    FORBIDDEN = "forbidden"
    FAILED = "failed"
    OUT_OF_SCOPE = "out_of_scope"
    EMPTY = "empty"  # the repository has no commit yet: nothing to index
    WAITING = "waiting"  # in scope, its sync not requested yet (the dispatcher keeps a bounded number in flight)


class BackfillProgress(enum.StrEnum):
    """Where one project of a backfill is (answered, never stored: derived from the project's state)."""

    QUEUED = "queued"  # waiting for a slot, or its sync is queued
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # not found, forbidden, or its sync failed (`detail` says why)
    SKIPPED = "skipped"  # out of the indexing scope, or an empty repository


class DeliveryOutcome(enum.StrEnum):
    """What the receiver answers for a delivery (`deliveries.outcome` stores `enqueued` or `ignored`)."""

    ENQUEUED = "enqueued"
    DEFERRED = "deferred"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"


class DeliveryRefusal(enum.StrEnum):
    """Why the receiver refused a delivery: the `outcome` of `javakb_deliveries` for its 4xx/5xx answers."""

    UNAUTHORIZED = "unauthorized"  # 401: wrong or missing token or signature (a rotated secret shows here)
    MALFORMED = "malformed"  # 400
    TOO_LARGE = "too_large"  # 413
    LOST = "lost"  # 503: neither PostgreSQL nor Redis could take it


class RequestSource(enum.StrEnum):
    """`index_requests.source`: who asked for an on-demand sync."""

    CI_JOB = "ci_job"  # a GitLab CI job token, checked with `GET /api/v4/job`
    INDEX_TOKEN = "index_token"  # an index-job token of the settings, for one project
    REFRESH = "refresh"  # an agent's `refresh_repo`


class RequestState(enum.StrEnum):
    """What `GET /api/v1/index-jobs/{id}` and `refresh_repo` answer for one on-demand sync request."""

    QUEUED = "queued"  # asked for, no run has covered it yet
    RUNNING = "running"  # the project is syncing
    DONE = "done"  # a sync covered the request (the index is at or past the head of that moment)
    FAILED = "failed"  # the last run failed before covering it (the worker retries; `error` says why)
    IGNORED = "ignored"  # not requested: the project is out of the indexing scope (`detail`)


ACCEPTED = frozenset({DeliveryOutcome.ENQUEUED, DeliveryOutcome.DEFERRED})
"""The outcomes answered 202 (the others are 200)."""


class RebuildStatus(enum.StrEnum):
    """`rebuilds.status`: a model rebuild's state (`app.sync.rebuild`)."""

    QUEUED = "queued"  # asked for; the worker has not created the new generation yet
    BUILDING = "building"  # the new generation fills from the manifests; pushes go to both generations
    SWITCHING = "switching"  # every project is rebuilt: the alias moves, the old generation goes
    DONE = "done"
    FAILED = "failed"


ACTIVE_REBUILD = frozenset({RebuildStatus.QUEUED, RebuildStatus.BUILDING, RebuildStatus.SWITCHING})


class RebuildProjectStatus(enum.StrEnum):
    """`rebuild_projects.status`: one project's part of a rebuild."""

    PENDING = "pending"
    DONE = "done"
    SKIPPED = "skipped"  # nothing indexed (never synced, out of scope, gone)
    FAILED = "failed"


class LibraryStatus(enum.StrEnum):
    """`libraries.status`: what became of one library version used in scope (issue 16)."""

    PENDING = "pending"  # allowed and within the budget, not fetched yet
    INDEXED = "indexed"
    NO_SOURCES = "no_sources"  # every configured repository answered 404 for its sources jar
    NOT_ALLOWED = "not_allowed"  # outside the allowlist, or used by fewer projects than the minimum
    OVER_BUDGET = "over_budget"  # past the number of libraries or bytes allowed
    FAILED = "failed"  # refused (401/403), too large, unreadable, or the repository failed: retried next run
