"""arq functions and the worker's settings: thin wrappers that call the sync with `ServiceDeps`.

The worker is composed with PostgreSQL and Redis (`ServiceDeps`), and with GitLab (`SyncDeps`) unless
`javakb serve` runs on bare defaults: then a job that must read GitLab fails with the `ConfigError` of
`sync_of`, and a sync records `NO_GITLAB` on its project.

Coalescing: every delivery bumps the project's `requested_gen` and enqueues `sync:<id>:<gen>`.
A job takes the project's advisory lock (so one project never syncs in parallel), then loops:
read the generation, sync to the *current* head read from the API (so an older push arriving late
cannot move the index backwards), record the generation as done, and go again if more deliveries
came in meanwhile. Jobs that find the work done return at once; a job that finds the lock busy
returns too: the holder reads the generations again after releasing the lock and enqueues one
follow-up job when work is left (`app.jobs.queue.enqueue_sync` never loses it to an old job's id).

Errors: transient ones (GitLab 5xx/429/timeouts, embedding outage, Qdrant/PostgreSQL) become
`arq.Retry` with backoff; arq retries nothing else. The project keeps its previous index and shows
`last_error`. Bad input inside a file never fails a job (the pipeline reports it as skipped).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from arq import Retry, cron
from arq.worker import Function, Worker, func

from app.core import metrics
from app.core.context import bind, bound
from app.core.errors import (
    TRANSIENT_ERRORS,
    GitLabError,
    ProjectBusyError,
    ServiceError,
    StorageError,
)
from app.core.events import Event, GitLabEvent
from app.core.settings import GITLAB_UNSET, Settings, cron_fields
from app.core.states import BackfillStatus, ProjectSource, ProjectStatus, SyncTrigger, Trigger, trigger_of
from app.db import Database
from app.jobs.queue import (
    BACKFILL,
    BACKFILL_STEP,
    LIBRARIES,
    MOVE,
    PURGE,
    REBUILD,
    REBUILD_FINISH,
    REBUILD_PROJECT,
    REFRESH,
    REPLAY,
    SYNC,
    enqueue_step,
    enqueue_sync,
)
from app.libraries.service import LibrariesBusyError, ask_for_run, index_libraries
from app.ops.worker_health import HEALTH_CHECK_INTERVAL_S, health_key
from app.runtime import Deps, ServiceDeps, SyncDeps, service_deps, sync_deps
from app.sync import backfill as backfills
from app.sync import lifecycle, rebuild
from app.sync.deliveries import DeliveryRecorder
from app.sync.local_project import sync_local
from app.sync.sweep import sweep
from app.sync.syncer import Syncer, SyncOutcome

logger = logging.getLogger(__name__)

REPLAY_TRIES = 40
LIFECYCLE_TRIES = REPLAY_TRIES  # a destroyed project's code must not stay searchable through a long outage
NO_GITLAB = f"{GITLAB_UNSET}, then POST /admin/reindex"
MAX_LOOPS = 5  # syncs per job before it hands over to the next queued job
# A sweep that fails (GitLab down, a refused token) is logged; the next one lists from the last good one.
SWEEP_ERRORS: tuple[type[ServiceError], ...] = (*TRANSIENT_ERRORS, GitLabError)


def deps_of(ctx: dict[str, Any]) -> ServiceDeps:
    """The `ServiceDeps` the worker put in its context at start."""
    deps: ServiceDeps = ctx["deps"]
    return deps


def sync_of(ctx: dict[str, Any]) -> SyncDeps:
    """The worker's `SyncDeps`, for a job that reads GitLab; `ConfigError` when started without GitLab."""
    return sync_deps(deps_of(ctx))


def backoff_s(job_try: int, cap: float = 300.0) -> float:
    """Seconds before retry number `job_try` (1, 2, 4, ... capped)."""
    return float(min(cap, 2 ** max(0, job_try - 1)))


async def sync_project(ctx: dict[str, Any], project_id: int, trigger_name: str = GitLabEvent.PUSH) -> str:
    """Sync one project to its default branch head, coalescing deliveries that arrive meanwhile.

    The job names its trigger as a plain string (`trigger_of`); one this version does not know syncs
    all the same, recorded as a hand-over.

    Any transient failure, including PostgreSQL's own (the status write, the lock, the hand-over),
    becomes `Retry` with backoff: the status is written when it can be, and never stops the retry.
    """
    deps = deps_of(ctx)
    db = deps.db
    trigger = trigger_of(trigger_name) or SyncTrigger.CONTINUE
    with bound(project_id=project_id):
        return await _sync_project(ctx, deps, db, project_id, trigger)


async def _sync_project(ctx: dict[str, Any], deps: ServiceDeps, db: Database, project_id: int, trigger: Trigger) -> str:
    try:
        project = await db.project(project_id)
        if project is not None and project.source == ProjectSource.LOCAL:  # a local checkout: its working tree
            return await sync_local(deps, project, trigger)
        if deps.gitlab is None:  # `javakb serve` on bare defaults: deliveries are recorded, nothing can sync
            await db.set_status(project_id, ProjectStatus.FAILED, NO_GITLAB)
            logger.error("sync of project %s skipped: %s", project_id, NO_GITLAB)
            return NO_GITLAB
        return await _sync_and_hand_over(deps, db, Syncer(sync_deps(deps)), project_id, trigger)
    except TRANSIENT_ERRORS as exc:
        await _note_failure(db, project_id, f"{type(exc).__name__}: {exc} (will retry)")
        raise Retry(defer=backoff_s(ctx.get("job_try", 1))) from exc


async def _sync_and_hand_over(
    deps: ServiceDeps, db: Database, syncer: Syncer, project_id: int, trigger: Trigger
) -> str:
    """Sync under the project's lock; once it is released, cover what arrived meanwhile.

    A job that finds the lock taken returns at once instead of retrying (jobs retrying every few
    seconds burnt their tries while a long sync held the lock): the holder reads the generations
    again *after* releasing the lock, so a delivery whose job found it taken is always seen by
    someone, and it enqueues one follow-up job when work is left. Busy jobs never enqueue
    anything, so no job spins while another holds the lock.
    """
    async with db.project_lock(project_id) as locked:
        if not locked:
            return "busy: the job holding the lock looks again when it releases it"
        result = await _sync_loop(db, syncer, project_id, trigger)
    generation = await lifecycle.hand_over(deps, project_id)
    return result if generation is None else f"{result}; handed over at generation {generation}"


async def _sync_loop(db: Database, syncer: Syncer, project_id: int, trigger: Trigger) -> str:
    """Sync to the current head until the requested generation is done, at most `MAX_LOOPS` times."""
    await db.close_abandoned_runs(project_id)
    for runs in range(MAX_LOOPS):
        row = await db.project(project_id)
        if row is None:
            return "unknown project"
        if not row.behind:
            return f"up to date after {runs} runs"
        try:
            outcome = await _guarded(db.set_status, project_id, syncer.sync_once(row, trigger))
        except ServiceError:
            metrics.SYNC_RUNS.labels(mode="unknown", outcome="failed").inc()
            raise
        observe_sync(outcome)
        c = outcome.counts
        logger.info(
            "sync %s %s..%s %s: %d files, %d embedded, %d reused, %d deleted (%.2fs)",
            project_id, (outcome.from_sha or "-")[:10], (outcome.to_sha or "-")[:10], outcome.mode,
            c.files_changed, c.chunks_embedded, c.chunks_reused, c.chunks_deleted, outcome.seconds,
        )  # fmt: skip
    return f"stopped after {MAX_LOOPS} runs"


def observe_sync(outcome: SyncOutcome) -> None:
    """Count one finished sync run in `/metrics`."""
    c = outcome.counts
    metrics.SYNC_RUNS.labels(mode=outcome.mode, outcome="done").inc()
    metrics.SYNC_SECONDS.labels(mode=outcome.mode).observe(outcome.seconds)
    for result, n in (("parsed", c.files_parsed), ("skipped", c.files_skipped), ("deleted", c.files_deleted)):
        metrics.FILES.labels(result=result).inc(n)
    for action, n in (("embedded", c.chunks_embedded), ("reused", c.chunks_reused), ("deleted", c.chunks_deleted)):
        metrics.CHUNKS.labels(action=action).inc(n)


async def _note_failure(db: Database, project_id: int, error: str) -> None:
    """Record a failure on the project if PostgreSQL takes it; a failing write must not stop the retry."""
    try:
        await db.set_status(project_id, ProjectStatus.FAILED, error)
    except StorageError as exc:
        logger.warning("project %s: cannot record %r: %s", project_id, error, exc)


async def _guarded(
    set_status: Callable[[int, ProjectStatus, str | None], Awaitable[None]],
    project_id: int,
    step: Awaitable[SyncOutcome],
) -> SyncOutcome:
    """Run a sync step; record a permanent failure on the project (transient ones go up to `Retry`)."""
    try:
        return await step
    except TRANSIENT_ERRORS:
        raise
    except ServiceError as exc:
        await set_status(project_id, ProjectStatus.FAILED, f"{type(exc).__name__}: {exc}")
        raise


_RETRIED: tuple[type[ServiceError], ...] = (*TRANSIENT_ERRORS, ProjectBusyError)


@contextmanager
def _transient_as_retry(ctx: dict[str, Any]) -> Iterator[None]:
    """Arq retries only `Retry`: a lifecycle job that hits a transient failure must ask for one (issue 9)."""
    try:
        yield
    except _RETRIED as exc:
        logger.warning("job %s will retry: %s: %s", ctx.get("job_id"), type(exc).__name__, exc)
        raise Retry(defer=backoff_s(ctx.get("job_try", 1))) from exc


async def purge_project(ctx: dict[str, Any], project_id: int) -> str:
    """A destroyed project: once GitLab confirms it, delete its points, then its state."""
    with _transient_as_retry(ctx), bound(project_id=project_id):
        return await lifecycle.purge(sync_of(ctx), project_id)


async def move_project(ctx: dict[str, Any], project_id: int, new_path: str) -> str:
    """A renamed or transferred project: rewrite repo_path to the path GitLab reports (no re-embedding)."""
    with _transient_as_retry(ctx), bound(project_id=project_id):
        return await lifecycle.move(sync_of(ctx), project_id, new_path)


async def refresh_project(ctx: dict[str, Any], project_id: int) -> str:
    """`project_update`: record access; resync when the default branch or the scope decision changed."""
    with _transient_as_retry(ctx), bound(project_id=project_id):
        return await lifecycle.refresh(sync_of(ctx), project_id)


async def backfill(
    ctx: dict[str, Any], project_ids: list[int] | None = None, full: bool = False, backfill_id: int | None = None
) -> str:
    """Admin backfill, first step: resolve its target into projects and record a decision for each.

    The target, `full` and `force` are read from the backfill's row (`POST /admin/reindex` wrote it);
    enqueued by hand without a row, it backfills `project_ids` or every project. Each project's
    outcome is recorded (`GET /admin/backfills/{id}`): one unknown or unreadable id is reported as
    such, the others are still synced. Then the dispatcher (`backfill_step`) keeps a bounded number of
    syncs in flight. Only failing to list the projects, or PostgreSQL failing, fails the backfill
    (retried when transient).
    """
    deps = deps_of(ctx)
    db = deps.db
    if backfill_id is None:  # enqueued by hand, not through POST /admin/reindex
        backfill_id = (await db.create_backfill(project_ids, full, {"all": True} if project_ids is None else {})).id
    row = await db.backfill(backfill_id)
    if row is None:
        return f"backfill {backfill_id} is unknown"
    await db.set_backfill_status(backfill_id, BackfillStatus.RUNNING)
    try:
        found = await backfills.resolve(sync_deps(deps), row["target"] or {}, row["project_ids"])
    except TRANSIENT_ERRORS as exc:
        await db.set_backfill_status(backfill_id, BackfillStatus.QUEUED, f"{type(exc).__name__}: {exc} (will retry)")
        raise Retry(defer=backoff_s(ctx.get("job_try", 1))) from exc
    except ServiceError as exc:
        await db.set_backfill_status(backfill_id, BackfillStatus.FAILED, f"{type(exc).__name__}: {exc}")
        return f"backfill {backfill_id} failed: {exc}"
    await db.add_backfill_projects(backfill_id, found)
    await enqueue_step(deps.queue, backfill_id, row["job_token"], 1)
    outcomes = Counter(f.outcome for f in found)
    return f"backfill {backfill_id}: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))


async def backfill_step(ctx: dict[str, Any], backfill_id: int, step: int) -> str:
    """One step of a backfill's dispatcher: request syncs for free slots, then run again later or finish."""
    deps = deps_of(ctx)
    db = deps.db
    try:
        row = await db.backfill(backfill_id)
        if row is None or not await db.note_backfill_step(backfill_id, step):
            return f"backfill {backfill_id} is not running"
        if row["started_at"] is None:  # still resolving: its `backfill` job enqueues the first step when done
            return f"backfill {backfill_id} is not resolved yet"
        done = await backfills.dispatch(deps, backfill_id, full=row["full_sync"], force=row["force_embed"])
        if done.finished:
            await db.set_backfill_status(backfill_id, BackfillStatus.DONE)
            return f"backfill {backfill_id} done"
        await enqueue_step(deps.queue, backfill_id, row["job_token"], step + 1, deps.settings.backfill.poll_s)
    except TRANSIENT_ERRORS as exc:
        logger.warning("backfill %s step %s will retry: %s: %s", backfill_id, step, type(exc).__name__, exc)
        raise Retry(defer=backoff_s(ctx.get("job_try", 1))) from exc
    return f"backfill {backfill_id} step {step}: {done.requested} requested, {done.in_flight} in flight"


async def _restart_backfills(deps: ServiceDeps) -> int:
    """The sweep's part: a running backfill whose dispatcher chain Redis lost gets its next step again.

    A chain that is alive already holds that step's id (queued, running or its kept result): arq
    refuses it, so this never forks a chain.
    """
    running = await deps.db.running_backfills()
    queue = deps.queue
    return sum([await enqueue_step(queue, i, token, step + 1) for i, (token, step) in running.items()])


async def start_rebuild(ctx: dict[str, Any], rebuild_id: int) -> str:
    """Model rebuild: create the new generation and queue one job per project (`app.sync.rebuild`)."""
    with _transient_as_retry(ctx):
        return await rebuild.start(deps_of(ctx), rebuild_id)


async def rebuild_project(ctx: dict[str, Any], rebuild_id: int, project_id: int) -> str:
    """Model rebuild: fill the new generation with one project, under the project's lock."""
    with _transient_as_retry(ctx), bound(project_id=project_id):
        return await rebuild.rebuild_project(sync_of(ctx), rebuild_id, project_id)


async def finish_rebuild(ctx: dict[str, Any], rebuild_id: int) -> str:
    """Model rebuild: switch the alias once every project is in the new generation; drop the old one."""
    with _transient_as_retry(ctx):
        return await rebuild.finish(deps_of(ctx), rebuild_id)


_LIBRARY_RETRIED: tuple[type[ServiceError], ...] = (*TRANSIENT_ERRORS, LibrariesBusyError)


async def libraries(ctx: dict[str, Any]) -> str:
    """Index the library versions projects use, once for the org; purge unused ones (`app.libraries.service`)."""
    try:
        return await index_libraries(deps_of(ctx))
    except _LIBRARY_RETRIED as exc:
        logger.info("library job will retry: %s: %s", type(exc).__name__, exc)
        raise Retry(defer=backoff_s(ctx.get("job_try", 1), cap=60.0)) from exc


async def replay_delivery(ctx: dict[str, Any], event: Event, key: str) -> str:
    """A delivery the receiver could not record (PostgreSQL was down): handle it now, as it would have."""
    try:
        outcome, detail = await DeliveryRecorder(deps_of(ctx)).handle(event, key)
    except StorageError as exc:
        raise Retry(defer=backoff_s(ctx.get("job_try", 1))) from exc
    return f"{outcome}: {detail}"


async def reconcile(ctx: dict[str, Any]) -> str:
    """Heal what deliveries missed: re-enqueue projects PostgreSQL has behind, then ask GitLab for drift.

    The second step (`app.sync.sweep`) finds pushes whose every delivery was lost, new projects, and
    renames or default-branch changes nobody told us about.
    """
    deps = deps_of(ctx)
    db = deps.db
    await lifecycle.sweep_scope(deps)
    await _restart_backfills(deps)
    if await db.libraries_behind():  # a change whose library job Redis lost
        await ask_for_run(deps)
    behind = await db.behind()
    for project_id in behind:
        row = await db.project(project_id)
        if row is not None:
            await enqueue_sync(deps.queue, project_id, row.requested_gen, SyncTrigger.RECONCILE)
    if deps.gitlab is None:
        return f"{len(behind)} projects behind; {NO_GITLAB}"
    try:
        handover = await sweep(sync_deps(deps), timedelta(seconds=deps.settings.worker.full_sweep_every_s))
    except SWEEP_ERRORS as exc:
        logger.warning("sweep failed, trying again next time: %s: %s", type(exc).__name__, exc)
        return f"{len(behind)} projects behind; sweep failed: {type(exc).__name__}"
    return f"{len(behind)} projects behind; from GitLab: {handover.describe()}"


def functions(settings: Settings) -> list[Function]:
    """The worker's functions with their retry and result policies."""
    tries = settings.worker.max_tries
    timeout = settings.worker.job_timeout_s
    return [
        # No result kept: a finished sync frees its id at once (see app.jobs.queue).
        func(sync_project, name=SYNC, max_tries=tries, timeout=timeout, keep_result=0),
        func(purge_project, name=PURGE, max_tries=max(tries, LIFECYCLE_TRIES), keep_result=3600),
        func(move_project, name=MOVE, max_tries=max(tries, LIFECYCLE_TRIES), keep_result=3600),
        func(refresh_project, name=REFRESH, max_tries=max(tries, LIFECYCLE_TRIES), keep_result=3600),
        func(backfill, name=BACKFILL, max_tries=3, keep_result=60),
        # Kept an hour: a retried step enqueues its successor once (`backfill_step_job_id`).
        func(backfill_step, name=BACKFILL_STEP, max_tries=max(tries, LIFECYCLE_TRIES), keep_result=3600),
        func(start_rebuild, name=REBUILD, max_tries=tries, keep_result=3600),
        func(rebuild_project, name=REBUILD_PROJECT, max_tries=max(tries, LIFECYCLE_TRIES), timeout=timeout),
        func(finish_rebuild, name=REBUILD_FINISH, max_tries=max(tries, LIFECYCLE_TRIES), keep_result=0),
        func(libraries, name=LIBRARIES, max_tries=max(tries, LIFECYCLE_TRIES), timeout=timeout, keep_result=0),
        # PostgreSQL may be down for a while: 40 tries back off to 5 minutes apart, about 3 hours.
        func(replay_delivery, name=REPLAY, max_tries=REPLAY_TRIES, keep_result=3600),
    ]


def build_worker(settings: Settings, deps: Deps, *, burst: bool = False, handle_signals: bool = True) -> Worker:
    """An arq worker over `deps` as `ServiceDeps` (the caller owns their lifetime; `SyncDeps` to sync GitLab)."""
    service = service_deps(deps)  # PostgreSQL and Redis, or a ConfigError now
    schedule = cron_fields(settings.worker.reconcile_every_s)  # exactly the interval (validated by Settings)
    return Worker(
        functions=functions(settings),
        cron_jobs=[cron(reconcile, **schedule, run_at_startup=True)],  # type: ignore[arg-type]
        queue_name=settings.redis.queue,
        redis_pool=service.queue,
        burst=burst,
        poll_delay=0.1 if burst else 0.5,
        max_jobs=settings.worker.max_jobs,
        job_timeout=settings.worker.job_timeout_s,
        handle_signals=handle_signals,
        health_check_interval=HEALTH_CHECK_INTERVAL_S,
        health_check_key=health_key(settings),
        ctx={"deps": service, "started": time.time()},
        on_job_start=_bind_job,
    )


async def _bind_job(ctx: dict[str, Any]) -> None:
    """Every line a job logs carries its id: set in the job's own task, inherited by the job's coroutine."""
    bind(job_id=ctx.get("job_id"))
