"""Project lifecycle events confirmed with the GitLab API, and the indexing scope applied (issue 9).

A system hook's payload is only a hint: anyone holding the webhook secret could forge one. So
`project_destroy` purges only when the API answers 404 or reports the project marked for
deletion; `project_rename` / `project_transfer` take the new path from the API, never from the
payload; `project_update` re-reads the project. Each also applies the indexing scope (`app.sync.scope`).

Leaving scope is always done by the sync job (`Syncer`), which holds the project's lock: the
others request a sync. Transient failures (GitLab, Qdrant, PostgreSQL, a busy lock) raise and the
arq wrappers in `entry.worker` turn them into retries.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.core.errors import GitLabNotFoundError, ProjectBusyError
from app.core.events import GitLabEvent
from app.core.states import ProjectStatus, SyncTrigger, Trigger
from app.gitlab.client import GitLabClient, ProjectInfo
from app.jobs.queue import enqueue_sync
from app.libraries.service import forget_project
from app.runtime import ServiceDeps, SyncDeps
from app.sync.scope import OutOfScope, decide, decide_path
from app.sync.syncer import purge_points, record_access, rename_points

logger = logging.getLogger(__name__)


@asynccontextmanager
async def held(deps: ServiceDeps, project_id: int) -> AsyncIterator[None]:
    """Hold the project's advisory lock, or raise `ProjectBusyError` (a sync is running: try later).

    Once it is released, the sync a delivery asked for meanwhile is handed over (`hand_over`): that
    delivery's own job found the lock taken and returned without a retry.
    """
    async with deps.db.project_lock(project_id) as locked:
        if not locked:
            raise ProjectBusyError(f"project {project_id} is locked by another job")
        yield
    await hand_over(deps, project_id)


async def hand_over(deps: ServiceDeps, project_id: int) -> int | None:
    """After the project's lock is released: enqueue a sync when the project is behind; its generation, or None.

    A sync job that finds the lock taken returns at once (`entry.worker`), so every holder of the lock,
    a sync, a lifecycle job or a model rebuild's, looks again when it lets go.
    """
    row = await deps.db.project(project_id)
    if row is None or not row.behind:
        return None
    await enqueue_sync(deps.queue, project_id, row.requested_gen, SyncTrigger.CONTINUE)
    return row.requested_gen


async def confirm_gone(gitlab: GitLabClient, project_id: int) -> str | None:
    """Why GitLab says the project is gone (404, or marked for deletion); None while it is live."""
    try:
        info = await gitlab.project(project_id)
    except GitLabNotFoundError:
        return "GitLab answers 404"
    if info.marked_for_deletion_on:
        return f"marked for deletion on {info.marked_for_deletion_on}"
    return None


async def purge(deps: SyncDeps, project_id: int) -> str:
    """`project_destroy`: delete the project's points, then its state, once GitLab confirms it is gone."""
    gone = await confirm_gone(deps.gitlab, project_id)
    if gone is None:
        logger.warning(
            "%s of project %s, which GitLab still serves: nothing purged", GitLabEvent.PROJECT_DESTROY, project_id
        )
        return f"project {project_id} still exists on GitLab: not purged"
    await _purge_held(deps, project_id)
    return f"purged project {project_id} ({gone})"


async def _purge_held(deps: ServiceDeps, project_id: int) -> None:
    db = deps.db
    async with held(deps, project_id):
        await purge_points(deps, project_id)
        await db.delete_project(project_id)
        await forget_project(deps, db, project_id)


async def move(deps: SyncDeps, project_id: int, claimed_path: str) -> str:
    """`project_rename` / `project_transfer`: move the points to the path GitLab reports (no re-embedding)."""
    db = deps.db
    try:
        info = await deps.gitlab.project(project_id)
    except GitLabNotFoundError:
        await _purge_held(deps, project_id)
        return f"purged project {project_id} (GitLab answers 404)"
    if info.path_with_namespace != claimed_path:
        logger.warning(
            "project %s: the delivery says %r, GitLab says %r: following GitLab",
            project_id, claimed_path[:200], info.path_with_namespace,
        )  # fmt: skip
    await record_access(db, info)
    row = await db.project(project_id)
    if row is None:
        return f"project {project_id} is not indexed"
    out = isinstance(decide(info, deps.settings.scope), OutOfScope)
    if out and row.status == ProjectStatus.OUT_OF_SCOPE:
        await db.rename_project(project_id, info.path_with_namespace)  # nothing indexed to move
        return f"project {project_id} is out of scope, now at {info.path_with_namespace}"
    if out or row.status == ProjectStatus.OUT_OF_SCOPE:
        return await _request(deps, info, SyncTrigger.SCOPE)  # the sync leaves (or re-enters) scope
    if row.repo_path == info.path_with_namespace:
        return f"project {project_id} is already at {row.repo_path}"
    async with held(deps, project_id):
        await rename_points(deps, project_id, info.path_with_namespace)
        await db.rename_project(project_id, info.path_with_namespace)
    return f"project {project_id} is now {info.path_with_namespace}"


async def refresh(deps: SyncDeps, project_id: int) -> str:
    """`project_update`: record access; resync when the default branch or the scope decision changed."""
    db = deps.db
    info = await deps.gitlab.project(project_id)
    await record_access(db, info)
    row = await db.project(project_id)
    decision = decide(info, deps.settings.scope)
    if isinstance(decision, OutOfScope):
        if row is None or row.status == ProjectStatus.OUT_OF_SCOPE:
            return f"project {project_id} is out of scope: {decision.reason}"
        return await _request(deps, info, SyncTrigger.SCOPE)  # the sync purges it
    if row is not None and row.status == ProjectStatus.OUT_OF_SCOPE:
        return await _request(deps, info, SyncTrigger.SCOPE)  # back in scope: index it again
    if row is not None and row.default_branch == info.default_branch:
        return "default branch unchanged"
    return await _request(deps, info, SyncTrigger.DEFAULT_BRANCH_CHANGED)


async def _request(deps: ServiceDeps, info: ProjectInfo, trigger: Trigger) -> str:
    """Request a full sync: it indexes an in-scope project and purges one out of scope, under its lock."""
    db = deps.db
    gen = await db.request_sync(info.id, info.path_with_namespace, info.default_branch, None, full=True)
    await enqueue_sync(deps.queue, info.id, gen, trigger)
    return f"full sync of project {info.id} requested ({trigger})"


async def out_of_scope(deps: ServiceDeps, info: ProjectInfo) -> str | None:
    """The backfill's check of one project: why it is out of scope, or None to sync it.

    A known project found out of scope gets the sync that purges it.
    """
    decision = decide(info, deps.settings.scope)
    if not isinstance(decision, OutOfScope):
        return None
    row = await deps.db.project(info.id)
    if row is not None and row.status != ProjectStatus.OUT_OF_SCOPE:
        logger.info("backfill: project %s (%s) left scope: %s", info.id, info.path_with_namespace, decision.reason)
        await _request(deps, info, SyncTrigger.SCOPE)
    return decision.reason


async def sweep_scope(deps: ServiceDeps) -> int:
    """The reconcile sweep's part: known projects whose path the scope no longer allows (a settings change).

    Only the path rules, from PostgreSQL (no GitLab call per project); the API-only facts (archived,
    forks, topics...) are checked by every sync and every `project_update`, and by a backfill.
    Returns how many projects got the sync that purges them.
    """
    db = deps.db
    scope = deps.settings.scope
    leaving = {i: p for i, p in (await db.settled_paths()).items() if isinstance(decide_path(p, scope), OutOfScope)}
    for project_id, path in leaving.items():
        gen = await db.request_sync(project_id, path, None, None, full=True)
        await enqueue_sync(deps.queue, project_id, gen, SyncTrigger.SCOPE)
    return len(leaving)
