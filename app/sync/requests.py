"""On-demand syncs without a system hook: a CI job's `POST /api/v1/index-jobs` and an agent's `refresh_repo`.

Both end where a delivery ends: the project's requested generation is bumped in PostgreSQL and a sync
job `sync:<project>:<generation>` is enqueued, so requests coalesce exactly as pushes do (one run
covers every generation asked while it waited, `entry.worker`'s generation loop) and a lost Redis job
is re-enqueued by the reconcile sweep.

- Index jobs are deduplicated on (project, commit) in `index_requests`: a retried CI job gets the
  same id back and bumps nothing. A job for another branch than the default, or a project out of the
  indexing scope, is recorded as `ignored` with the reason (the receiver's rule for pushes).
- A refresh is idempotent: while the project already has a request waiting, it asks for nothing new
  and only makes sure that generation's job is queued (`enqueue_sync` answers "already queued" from
  the queue's job id). Otherwise it is rate-limited per project (`access.refresh_every_s`, a Redis key
  with that expiry, shared by every replica), then requested like an index job.

`request_state` is pure: a request's state is read from its project's generations and status.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from app.auth.access import Access
from app.core.errors import QueueUnavailableError, RateLimitedError, StorageError
from app.core.settings import ScopeSettings
from app.core.states import ProjectStatus, RequestSource, RequestState, SyncTrigger
from app.db import IndexRequestRow, NewRequest, ProjectRow
from app.gitlab.client import ProjectInfo
from app.jobs.queue import enqueue_sync, refresh_limit_key
from app.jobs.redis import take_limit
from app.runtime import ServiceDeps
from app.sync.scope import OutOfScope, decide

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Refreshed:
    """What a refresh did: a new request (`request_id`), or the generation already waiting."""

    project_id: int
    repo: str
    generation: int | None
    request_id: int | None
    state: RequestState
    detail: str


def ignored_reason(project: ProjectInfo, ref: str | None, scope: ScopeSettings) -> str | None:
    """Why an index job for `project` (run on branch `ref`, when known) requests no sync; None when it does."""
    decision = decide(project, scope)
    if isinstance(decision, OutOfScope):
        return f"out of the indexing scope: {decision.reason}"
    if ref is not None and project.default_branch is not None and ref != project.default_branch:
        return f"{ref} is not the default branch ({project.default_branch})"
    return None


def request_state(request: IndexRequestRow, project: ProjectRow | None) -> tuple[RequestState, str | None]:
    """A request's state and its error or reason, from its project's row (pure)."""
    if request.generation is None:
        return RequestState.IGNORED, request.detail
    if project is None:
        return RequestState.IGNORED, "the project is no longer indexed (destroyed, or out of scope)"
    if project.status == ProjectStatus.OUT_OF_SCOPE:
        return RequestState.IGNORED, project.last_error
    if project.done_gen >= request.generation:
        return RequestState.DONE, None
    if project.status == ProjectStatus.FAILED:
        return RequestState.FAILED, project.last_error
    if project.status == ProjectStatus.SYNCING:
        return RequestState.RUNNING, None
    return RequestState.QUEUED, None


async def request_index_job(
    deps: ServiceDeps, project: ProjectInfo, commit_sha: str, source: RequestSource, requested_by: str, ref: str | None
) -> tuple[IndexRequestRow, bool]:
    """Record an index job for `commit_sha` and enqueue its sync: (the request, whether it is new)."""
    new = NewRequest(
        project_id=project.id,
        repo_path=project.path_with_namespace,
        default_branch=project.default_branch,
        commit_sha=commit_sha,
        source=source,
        requested_by=requested_by,
        ignored=ignored_reason(project, ref, deps.settings.scope),
    )
    row, fresh = await deps.db.create_request(new)
    if fresh and row.generation is not None:
        await _nudge(deps, project.id, row.generation, SyncTrigger.INDEX_JOB)
    logger.info(
        "index job %s: project %s at %s by %s -> %s",
        row.id, project.id, commit_sha[:12], requested_by, "new" if fresh else "seen before",
    )  # fmt: skip
    return row, fresh


async def refresh(deps: ServiceDeps, access: Access, repo: str) -> Refreshed | None:
    """An agent's request to sync one repository it may read now; None when it cannot read (or there is none).

    Raises:
        RateLimitedError: the project was refreshed less than `access.refresh_every_s` ago.
        StorageError: PostgreSQL or Redis did not answer.
    """
    try:
        return await _refresh(deps, access, repo)
    except QueueUnavailableError as exc:
        raise StorageError(f"the queue is unavailable: {exc}") from exc


async def _refresh(deps: ServiceDeps, access: Access, repo: str) -> Refreshed | None:
    db = deps.db
    row = await db.project_at(repo)
    if row is None or not access.may_read(row.repo_path, row.id):
        return None
    if row.status == ProjectStatus.OUT_OF_SCOPE:
        return _refreshed(row, None, None, RequestState.IGNORED, row.last_error or "out of the indexing scope")
    if row.behind:
        queued = await enqueue_sync(deps.queue, row.id, row.requested_gen, SyncTrigger.REFRESH)
        detail = "a sync was already waiting" + ("" if queued else " in the queue") + ": nothing new was asked"
        state = RequestState.RUNNING if row.status == ProjectStatus.SYNCING else RequestState.QUEUED
        return _refreshed(row, row.requested_gen, None, state, detail)
    await _take_refresh(deps, row.id)
    request, _ = await db.create_request(
        NewRequest(
            project_id=row.id, repo_path=row.repo_path, default_branch=row.default_branch, commit_sha=None,
            source=RequestSource.REFRESH, requested_by=access.subject,
        )
    )  # fmt: skip
    assert request.generation is not None  # a refresh is never ignored: the project is in scope
    await _nudge(deps, row.id, request.generation, SyncTrigger.REFRESH)
    logger.info(
        "refresh of project %s (%s) by %s: generation %s", row.id, row.repo_path, access.subject, request.generation
    )
    return _refreshed(row, request.generation, request.id, RequestState.QUEUED, "sync requested")


def _refreshed(
    row: ProjectRow, generation: int | None, request_id: int | None, state: RequestState, detail: str
) -> Refreshed:
    return Refreshed(
        project_id=row.id, repo=row.repo_path, generation=generation, request_id=request_id, state=state, detail=detail
    )


async def _take_refresh(deps: ServiceDeps, project_id: int) -> None:
    """One refresh per project per `access.refresh_every_s`, across every replica (a Redis key with that expiry)."""
    every_ms = int(deps.settings.access.refresh_every_s * 1000)
    wait_ms = await take_limit(deps.queue, refresh_limit_key(project_id), every_ms)
    if wait_ms is None:
        return
    wait_s = max(wait_ms, 0) / 1000 or deps.settings.access.refresh_every_s
    raise RateLimitedError(f"project {project_id} was refreshed moments ago", retry_after_s=wait_s)


async def _nudge(deps: ServiceDeps, project_id: int, gen: int, trigger: SyncTrigger) -> None:
    try:
        await enqueue_sync(deps.queue, project_id, gen, trigger)
    except QueueUnavailableError as exc:
        # The request is recorded in PostgreSQL; the reconcile sweep enqueues what is behind.
        logger.warning("queue unavailable, left to the reconcile sweep: %s", exc)
