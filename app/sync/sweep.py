"""The reconcile sweep's GitLab pass: find projects whose default-branch head moved without a delivery.

GitLab never resends a failed system-hook delivery, so the sweep asks GitLab itself, batched:

1. One listing, `GET /projects?last_activity_after=...` (ordered by id, 100 a page asked by `id_after`): every project
   that may have moved since the last sweep. Every `full_sweep_every_s` the listing has no filter,
   which also catches renames, transfers and default-branch changes that were not pushes.
2. `GET /projects/:id/repository/branches/:default` only for listed projects that may have moved;
   every head GitLab reported is recorded (`projects.head_sha`, `head_checked_at`) in one statement,
   and every drifted project's sync requested in one statement and one Redis transaction
   (`request_drifts`): no query per project, however many projects a sweep lists.

`last_activity_at` is throttled: a push moves it only when it is over an hour old
(`Event::RESET_PROJECT_ACTIVITY_INTERVAL = 1.hour`, `Event#reset_project_activity` in gitlabhq's
`app/models/event.rb`: `where('last_activity_at <= ?', 1.hour.ago).update_all(last_activity_at: ...)`).
So after a push at `t` the stored value is at least `t - 1 h`, and a project may have moved since this
service last saw its head at `c` exactly when `last_activity_at > c - 1 h` (`may_have_moved`); the
listing's cutoff is the previous listing's start minus the same hour. `SLACK` covers the skew between
GitLab's clock and PostgreSQL's, whose `now()` stamps every check. When nothing changed for an hour a
sweep costs one call per 100 recently active projects (one call when there are none).

3. After a full listing, known projects it no longer lists are asked for one by one: GitLab answers
   404 for a project that was destroyed while its `project_destroy` delivery was lost (the purge job
   confirms it again and purges), or reports it archived or otherwise out of scope (its sync purges
   it). A full listing that misses more than `VANISHED_SHARE` of the known projects (and more than
   `VANISHED_MIN`) is not believed: that is a token that lost access, not a wave of deletions, and
   GitLab answers 404 for projects a token cannot see, so nothing is purged and a warning says why.

`plan_sweep`, `compare_heads` and `believable` are pure; `sweep` does the I/O.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.core.errors import GitLabNotFoundError
from app.core.settings import ScopeSettings
from app.core.states import BackfillOutcome, BackfillStatus, SyncTrigger
from app.db import HeadSeen, SweepMarks
from app.db.backfills import Resolved
from app.gitlab.client import Activity, ProjectInfo
from app.jobs.queue import PURGE, enqueue_once, enqueue_step, enqueue_sync, purge_job_id, push_syncs
from app.runtime import ServiceDeps, SyncDeps
from app.sync.backfill import slots
from app.sync.scope import OutOfScope, decide

logger = logging.getLogger(__name__)

THROTTLE = timedelta(hours=1)  # gitlabhq `Event::RESET_PROJECT_ACTIVITY_INTERVAL`
SLACK = timedelta(minutes=5)
NAME = "reconcile"
DISCOVERED = "discovered"
VANISHED_SHARE = 0.1
VANISHED_MIN = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Drift:
    """A project to sync: why, and whether its whole tree is walked."""

    project: ProjectInfo
    reason: str  # discovered | moved | default branch changed | head moved
    full: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPlan:
    """What the listing alone decides, and whose heads must be asked for."""

    sync: tuple[Drift, ...]
    check: tuple[Activity, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Handover:
    """What a sweep did with what it found: drifts synced now, and new projects left to a backfill."""

    drifts: list[Drift]
    new: int = 0  # new projects handed to backfill `backfill_id` instead
    backfill_id: int | None = None

    def describe(self) -> str:
        """`3 drifted`, or `0 drifted, 150 new projects handed to backfill 4` (the sweep's log, the job's result)."""
        said = f"{len(self.drifts)} drifted"
        if self.backfill_id is None:
            return said
        return f"{said}, {self.new} new projects handed to backfill {self.backfill_id}"


def listing_cutoff(marks: SweepMarks, full_every: timedelta) -> datetime | None:
    """`last_activity_after` for this sweep's listing; None lists every project."""
    if marks.listed_at is None or marks.full_at is None or marks.now - marks.full_at >= full_every:
        return None
    return marks.listed_at - THROTTLE - SLACK


def may_have_moved(last_activity_at: datetime, checked_at: datetime | None) -> bool:
    """Whether a push may have happened since the head was seen at `checked_at` (see the module docs)."""
    return checked_at is None or last_activity_at > checked_at - THROTTLE - SLACK


def plan_sweep(listed: Sequence[Activity], known: Mapping[int, HeadSeen], scope: ScopeSettings) -> SweepPlan:
    """Sort listed projects: sync now (new, moved, new default branch, in or out of scope), ask for the head, or leave.

    The indexing scope is decided from the listing's own project facts: a project out of scope is
    not discovered, one that left it gets the sync that purges it, one that came back is indexed again.
    """
    sync: list[Drift] = []
    check: list[Activity] = []
    for activity in listed:
        project = activity.project
        row = known.get(project.id)
        outside = isinstance(decide(project, scope), OutOfScope)
        if row is None or row.out_of_scope:
            if not outside:
                reason = DISCOVERED if row is None else "back in scope"
                sync.append(Drift(project=project, reason=reason, full=row is not None))
        elif outside:
            sync.append(Drift(project=project, reason="left scope", full=True))  # the sync purges it
        elif row.behind:
            continue  # deliveries are waiting: the sweep re-enqueues those from PostgreSQL anyway
        elif row.repo_path != project.path_with_namespace:
            sync.append(Drift(project=project, reason="moved"))  # the sync moves the points first
        elif row.default_branch is not None and project.default_branch != row.default_branch:
            sync.append(Drift(project=project, reason="default branch changed", full=True))
        elif project.default_branch and may_have_moved(activity.last_activity_at, row.head_checked_at):
            check.append(activity)
    return SweepPlan(sync=tuple(sync), check=tuple(check))


def compare_heads(
    checked: Sequence[Activity], heads: Sequence[str | None], known: Mapping[int, HeadSeen]
) -> tuple[list[Drift], list[int]]:
    """Projects whose head is not the indexed commit, and the ids of those whose head is."""
    moved: list[Drift] = []
    same: list[int] = []
    for activity, head in zip(checked, heads, strict=True):
        if head is not None and head != known[activity.project.id].indexed_sha:
            moved.append(Drift(project=activity.project, reason="head moved"))
        else:
            same.append(activity.project.id)  # None: the branch has no commit yet, nothing to index
    return moved, same


async def sweep(deps: SyncDeps, full_every: timedelta) -> Handover:
    """List GitLab's projects, ask for the heads that may have moved, and request a sync of each drift."""
    db, gitlab = deps.db, deps.gitlab
    marks = await db.sweep_start(NAME)
    cutoff = listing_cutoff(marks, full_every)
    listed = await gitlab.activity(cutoff)
    known = await db.heads_seen([a.project.id for a in listed])
    await record_listed_access(deps, listed)
    plan = plan_sweep(listed, known, deps.settings.scope)
    heads = await asyncio.gather(
        *(gitlab.branch_head(a.project.id, a.project.default_branch or "") for a in plan.check)
    )
    await db.record_heads([(a.project.id, head) for a, head in zip(plan.check, heads, strict=True)], marks.now)
    moved, _ = compare_heads(plan.check, heads, known)
    handover = await leave_to_backfill(deps, [*plan.sync, *moved])
    await request_drifts(deps, handover.drifts)
    if cutoff is None:
        await confirm_unlisted(deps, [a.project.id for a in listed])
    await db.sweep_done(NAME, marks.now, full=cutoff is None)
    logger.info(
        "sweep: %d listed (%s), %d heads asked, %s",
        len(listed), "all" if cutoff is None else f"active after {cutoff.isoformat()}", len(plan.check),
        handover.describe(),
    )  # fmt: skip
    return handover


async def leave_to_backfill(deps: ServiceDeps, drifts: Sequence[Drift]) -> Handover:
    """The drifts to sync now; many new projects at once go to a backfill, so pushes never queue behind them.

    A first listing of 5,000 projects would otherwise enqueue 5,000 first syncs ahead of every push
    (the "flood" of docs/performance.md). More discoveries than a backfill's slots become one backfill
    (target `{"discovered": n}`), whose dispatcher keeps `slots` syncs in flight; a project already
    waiting in an open backfill (the admin's, or an earlier sweep's) is left to it, not discovered again.
    """
    new = [d for d in drifts if d.reason == DISCOVERED]
    if not new:
        return Handover(drifts=list(drifts))
    db = deps.db
    waiting = await db.waiting_in_backfills([d.project.id for d in new])
    fresh = [d for d in new if d.project.id not in waiting]
    rest = [d for d in drifts if d.reason != DISCOVERED]
    if len(fresh) <= slots(deps.settings):
        return Handover(drifts=[*rest, *fresh])
    opened = await db.create_backfill(None, False, {DISCOVERED: len(fresh)})
    backfill_id = opened.id
    await db.set_backfill_status(backfill_id, BackfillStatus.RUNNING)
    found = [
        Resolved(project_id=d.project.id, repo_path=d.project.path_with_namespace, outcome=BackfillOutcome.WAITING,
                 detail="discovered by the sweep")
        for d in fresh
    ]  # fmt: skip
    await db.add_backfill_projects(backfill_id, found)
    await enqueue_step(deps.queue, backfill_id, opened.job_token, 1)
    logger.info("sweep: %d new projects left to backfill %d (%d syncs at a time)", len(fresh), backfill_id,
                slots(deps.settings))  # fmt: skip
    return Handover(drifts=rest, new=len(fresh), backfill_id=backfill_id)


async def request_drifts(deps: ServiceDeps, drifts: Sequence[Drift]) -> None:
    """Request a sync of every drifted project: one PostgreSQL statement and one Redis transaction for all.

    The generations are new (PostgreSQL handed each out once), which is what lets `push_syncs` skip
    arq's per-job existence check, as the receiver does.
    """
    if not drifts:
        return
    rows = [(d.project.id, d.project.path_with_namespace, d.project.default_branch, d.full) for d in drifts]
    gens = await deps.db.request_syncs(rows)
    jobs = [(d.project.id, gen, SyncTrigger.RECONCILE) for d, gen in zip(drifts, gens, strict=True)]
    await push_syncs(deps.queue, jobs)
    for drift in drifts:
        p = drift.project
        logger.info("sweep: project %s (%s) %s: sync requested", p.id, p.path_with_namespace, drift.reason)


async def record_listed_access(deps: ServiceDeps, listed: Sequence[Activity]) -> int:
    """Refresh who may read the listed projects (a `project_update` whose delivery was lost).

    The access model reads these columns. The web app's own listing of recently updated projects
    (`app.auth.visibility`) closes a project made private within the access TTL; this one repairs what
    that listing cannot see (repository access) within one full listing (`full_sweep_every_s`).
    """
    rows = [
        (a.project.id, a.project.visibility, a.project.repository_access)
        for a in listed
        if a.project.visibility is not None and a.project.repository_access is not None
    ]
    return await deps.db.set_projects_access(rows) if rows else 0


def believable(missing: int, known: int) -> bool:
    """Whether `missing` of `known` projects absent from a full listing can be deletions (see the module docs)."""
    return missing <= max(VANISHED_MIN, known * VANISHED_SHARE)


async def confirm_unlisted(deps: SyncDeps, listed: Sequence[int]) -> int:
    """Ask GitLab about known projects a full listing left out; purge or re-scope them; how many were acted on."""
    db, gitlab, queue = deps.db, deps.gitlab, deps.queue
    missing, known = await db.unlisted(listed)
    if not believable(len(missing), known):
        logger.warning(
            "sweep: %d of %d known projects are not in GitLab's listing: none purged (did the token lose access?)",
            len(missing), known,
        )  # fmt: skip
        return 0
    acted = 0
    for project_id in missing:
        try:
            info = await gitlab.project(project_id)
        except GitLabNotFoundError:
            acted += await enqueue_once(queue, PURGE, purge_job_id(project_id, "sweep"), project_id)
            logger.info("sweep: project %s is gone from GitLab: purge requested", project_id)
            continue
        if isinstance(decide(info, deps.settings.scope), OutOfScope):  # archived, for one: not listed
            gen = await db.request_sync(project_id, info.path_with_namespace, info.default_branch, None, full=True)
            acted += await enqueue_sync(queue, project_id, gen, SyncTrigger.SCOPE)
    return acted
