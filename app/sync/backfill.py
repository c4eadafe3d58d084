"""Admin backfills at scale (issue 14): resolve what was asked for, then keep a bounded number of syncs in flight.

`resolve` turns the request's target (`{"project"}`, `{"group", "include_subgroups"}`, `{"all"}`, or
the older `{"projects": [ids]}`) into projects, one GitLab listing or one call per named project,
and records a decision for each: `waiting` (in scope, to sync), or a reason it is not synced
(`not_found`, `forbidden`, `failed`, `out_of_scope`, `empty`). Nothing is dropped silently.

`dispatch` is one step of the dispatcher: it requests the syncs of at most `slots` waiting projects
at a time, through the usual generation (`request_sync` then `enqueue_sync`, trigger `backfill`),
and asks to run again after `poll_s` while any is unsettled. The worker's other slots stay free for
live pushes, so a push never queues behind a 5,000-project backfill (docs/decisions.md).

`rate` is pure: throughput and ETA from the counts and the clock.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.errors import GitLabAuthError, GitLabError, GitLabNotFoundError
from app.core.settings import Settings
from app.core.states import BackfillOutcome, BackfillProgress, SyncTrigger
from app.db.backfills import Resolved
from app.gitlab.client import GitLabClient, ProjectInfo
from app.jobs.queue import enqueue_sync
from app.runtime import ServiceDeps, SyncDeps
from app.sync import lifecycle

logger = logging.getLogger(__name__)

NOT_FOUND = "GitLab has no such project, or the token cannot see it"


class TargetNotFoundError(GitLabError):
    """The project or group a backfill names does not exist, or the token cannot see it."""


def slots(settings: Settings) -> int:
    """Projects a backfill syncs at once: the setting, leaving at least one worker slot to live pushes."""
    return max(1, min(settings.backfill.concurrency, settings.worker.max_jobs - 1))


async def resolve(deps: SyncDeps, target: Mapping[str, Any], project_ids: Sequence[int] | None) -> list[Resolved]:
    """Every project the target names, each with the backfill's decision for it."""
    gitlab = deps.gitlab
    if project_ids is not None:
        return [await _named(deps, gitlab, project_id) for project_id in project_ids]
    if "project" in target:
        if isinstance(target["project"], int):  # an id has a row to record its failure under, as a listed one
            return [await _named(deps, gitlab, target["project"])]
        try:
            info = await gitlab.project_at(target["project"])
        except GitLabNotFoundError as exc:
            raise TargetNotFoundError(
                f"no project {target['project']!r} on GitLab, or the token cannot see it"
            ) from exc
        return [await decide(deps, info)]
    if "group" in target:
        try:
            found = await gitlab.group_projects(
                target["group"], include_subgroups=bool(target.get("include_subgroups"))
            )
        except GitLabNotFoundError as exc:
            raise TargetNotFoundError(f"no group {target['group']!r} on GitLab, or the token cannot see it") from exc
        return [await decide(deps, info) for info in found]
    return [await decide(deps, info) for info in await gitlab.project_ids()]


async def _named(deps: ServiceDeps, gitlab: GitLabClient, project_id: int) -> Resolved:
    """One project of `{"projects": [ids]}`: asked for by id, its failure recorded under that id."""

    def failed(outcome: BackfillOutcome, detail: str) -> Resolved:
        return Resolved(project_id=project_id, repo_path=None, outcome=outcome, detail=detail)

    try:
        info = await gitlab.project(project_id)
    except GitLabNotFoundError:
        return failed(BackfillOutcome.NOT_FOUND, NOT_FOUND)
    except GitLabAuthError as exc:
        return failed(BackfillOutcome.FORBIDDEN, str(exc))
    except GitLabError as exc:
        return failed(BackfillOutcome.FAILED, f"{type(exc).__name__}: {exc} (run the backfill again)")
    return await decide(deps, info)


async def decide(deps: ServiceDeps, info: ProjectInfo) -> Resolved:
    """Out of scope (a known one gets the sync that purges it), an empty repository, or waiting for its sync."""

    def resolved(outcome: BackfillOutcome, detail: str) -> Resolved:
        return Resolved(project_id=info.id, repo_path=info.path_with_namespace, outcome=outcome, detail=detail)

    reason = await lifecycle.out_of_scope(deps, info)
    if reason is not None:
        return resolved(BackfillOutcome.OUT_OF_SCOPE, reason)
    if info.empty:
        return resolved(BackfillOutcome.EMPTY, "the repository has no commit yet")
    return resolved(BackfillOutcome.WAITING, "waiting for a free slot")


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """What one dispatcher step did."""

    requested: int
    in_flight: int
    finished: bool


async def dispatch(deps: ServiceDeps, backfill_id: int, *, full: bool, force: bool) -> Step:
    """Request the syncs of as many waiting projects as there are free slots; whether all are settled."""
    db = deps.db
    in_flight = await db.backfill_in_flight(backfill_id)
    waiting = await db.waiting_projects(backfill_id, slots(deps.settings) - in_flight)
    for project_id, repo_path in waiting:
        gen = await db.request_sync(project_id, repo_path, None, None, full=full, force=force)
        await db.mark_backfill_requested(backfill_id, project_id, gen)
        await enqueue_sync(deps.queue, project_id, gen, SyncTrigger.BACKFILL)
    left = await db.waiting_projects(backfill_id, 1)
    unsettled = in_flight + len(waiting)
    return Step(requested=len(waiting), in_flight=unsettled, finished=not left and unsettled == 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """A backfill's pace: files per second, projects per second, and the seconds left (None: unknown yet)."""

    files_per_s: float
    projects_per_s: float
    eta_s: float | None


def rate(projects: Mapping[str, int], files: int, elapsed_s: float) -> Rate:
    """Throughput since the backfill started, and the ETA of its unsettled projects at that pace (pure)."""
    settled = sum(projects.get(p, 0) for p in (BackfillProgress.DONE, BackfillProgress.FAILED))
    left = sum(projects.get(p, 0) for p in (BackfillProgress.QUEUED, BackfillProgress.RUNNING))
    if elapsed_s <= 0:
        return Rate(files_per_s=0.0, projects_per_s=0.0, eta_s=None if left else 0.0)
    per_s = settled / elapsed_s
    eta = 0.0 if not left else (left / per_s if per_s > 0 else None)
    return Rate(files_per_s=files / elapsed_s, projects_per_s=per_s, eta_s=eta)
