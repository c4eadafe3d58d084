"""Job names and job ids on the arq queue (and the refresh limit's key): the one module that spells them.

A sync job's id carries the project's requested generation (`sync:<project>:<gen>`): every delivery
that bumps the generation gets its own job, and runs that find the work already done return at once.

arq refuses an id while a job, an in-progress key or a kept result with it is stored. A delivery's
id is always new (PostgreSQL hands each generation out once), but the sweep, the hand-over and the
start-up catch-up ask again for a generation whose id may be held by a job that can never run: one
killed by SIGKILL (its in-progress key lives the job timeout + 10 s) or one out of tries (its result
is kept). `enqueue_sync` therefore only reports "already queued" when that job is really waiting to
run, and otherwise enqueues the same work under a fresh id (`sync:<project>:<gen>:<nonce>`).
Every enqueue runs inside `app.jobs.redis.translated`: Redis failing raises `QueueUnavailableError`.
Several jobs for one project are harmless: they serialize on the project's lock, and a job that
finds the lock taken returns at once (the holder looks again after releasing it).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix
from arq.jobs import serialize_job
from arq.utils import timestamp_ms

from app.core.states import Trigger
from app.jobs.redis import translated

SYNC = "sync_project"
PURGE = "purge_project"
MOVE = "move_project"
REFRESH = "refresh_project"
BACKFILL = "backfill"
BACKFILL_STEP = "backfill_step"
REPLAY = "replay_delivery"
REBUILD = "rebuild"
REBUILD_PROJECT = "rebuild_project"
REBUILD_FINISH = "rebuild_finish"
LIBRARIES = "index_libraries"


def sync_job_id(project_id: int, gen: int, nonce: str | None = None) -> str:
    """The id of the job that syncs `project_id` up to (at least) generation `gen`."""
    base = f"sync:{project_id}:{gen}"
    return base if nonce is None else f"{base}:{nonce}"


def purge_job_id(project_id: int, key: str) -> str:
    """The id of the job that purges a destroyed project, per delivery `key` (a resend runs once)."""
    return f"purge:{project_id}:{key}"


def move_job_id(project_id: int, key: str) -> str:
    """The id of the job that moves a renamed or transferred project, per delivery `key`."""
    return f"move:{project_id}:{key}"


def refresh_job_id(project_id: int, key: str) -> str:
    """The id of the job that refreshes a project after `project_update`, per delivery `key`."""
    return f"refresh:{project_id}:{key}"


def replay_job_id(key: str) -> str:
    """The id of the job that records delivery `key` once PostgreSQL is back."""
    return f"replay:{key}"


def refresh_limit_key(project_id: int) -> str:
    """The Redis key that holds back a second agent refresh of `project_id` (`app.sync.requests.refresh`)."""
    return f"javakb:refresh-limit:{project_id}"


def backfill_job_id(backfill_id: int, token: str) -> str:
    """The id of the job that runs admin backfill `backfill_id` (`token`: its row's `job_token`).

    Every id of a backfill's or rebuild's jobs carries its row's random token: PostgreSQL recreated or
    restored while Redis is kept hands the same row ids out again, and arq would refuse them (it keeps
    these jobs' results an hour). Within one backfill or rebuild the ids stay fixed.
    """
    return f"backfill:{backfill_id}:{token}"


def backfill_step_job_id(backfill_id: int, token: str, step: int) -> str:
    """The id of dispatcher step `step` of backfill `backfill_id` (a retried step enqueues its successor once)."""
    return f"{backfill_job_id(backfill_id, token)}:step:{step}"


async def enqueue_step(queue: ArqRedis, backfill_id: int, token: str, step: int, defer_s: float = 0.0) -> bool:
    """Enqueue a backfill's dispatcher step, after `defer_s` seconds; False when that step is already known."""
    job_id = backfill_step_job_id(backfill_id, token, step)
    with translated():
        job = await queue.enqueue_job(BACKFILL_STEP, backfill_id, step, _job_id=job_id, _defer_by=defer_s or None)
    return job is not None


def rebuild_job_id(rebuild_id: int, token: str) -> str:
    """The id of the job that starts model rebuild `rebuild_id` (`token`: its row's, as in `backfill_job_id`)."""
    return f"rebuild:{rebuild_id}:{token}"


def rebuild_project_job_id(rebuild_id: int, token: str, project_id: int) -> str:
    """The id of the job that fills the new generation of rebuild `rebuild_id` with one project."""
    return f"{rebuild_job_id(rebuild_id, token)}:{project_id}"


def rebuild_finish_job_id(rebuild_id: int, token: str) -> str:
    """The id of the job that switches the alias to rebuild `rebuild_id`'s generation once it is full."""
    return f"{rebuild_job_id(rebuild_id, token)}:finish"


def libraries_job_id(nonce: str | None = None) -> str:
    """The id of the org-wide library job (issue 16): one waits at a time; a fresh one when it already runs."""
    return "libraries" if nonce is None else f"libraries:{nonce}"


async def enqueue_libraries(queue: ArqRedis) -> bool:
    """Ask for a library run after a change of what projects declare; False when one already waits to start.

    A run already under way may have read the declarations before this change: then another is queued
    under a fresh id (it waits for the running one's lock).
    """
    with translated():
        return await _enqueue_libraries(queue)


async def _enqueue_libraries(queue: ArqRedis) -> bool:
    if await queue.enqueue_job(LIBRARIES, _job_id=libraries_job_id()) is not None:
        return True
    if await _waiting(queue, libraries_job_id()):
        return False
    return await queue.enqueue_job(LIBRARIES, _job_id=libraries_job_id(uuid.uuid4().hex[:12])) is not None


async def enqueue_sync(queue: ArqRedis, project_id: int, gen: int, trigger: Trigger) -> bool:
    """Ask the worker to sync a project up to (at least) generation `gen`; False if already queued.

    "Already queued" means a job under the generation's id waits in the queue and no worker holds
    it. An id held by anything else (a running or killed job, a kept result) gets the work enqueued
    under a fresh id instead, so a request is never dropped because of an old job.
    """
    with translated():
        return await _enqueue_sync(queue, project_id, gen, trigger)


async def _enqueue_sync(queue: ArqRedis, project_id: int, gen: int, trigger: Trigger) -> bool:
    job_id = sync_job_id(project_id, gen)
    if await queue.enqueue_job(SYNC, project_id, str(trigger), _job_id=job_id) is not None:
        return True
    if await _waiting(queue, job_id):
        return False
    fresh = sync_job_id(project_id, gen, uuid.uuid4().hex[:12])
    return await queue.enqueue_job(SYNC, project_id, str(trigger), _job_id=fresh) is not None


async def _waiting(queue: ArqRedis, job_id: str) -> bool:
    """Whether `job_id` is in the queue (deferred or due) and no worker has started it."""
    async with queue.pipeline(transaction=False) as pipe:
        pipe.zscore(queue.default_queue_name, job_id)
        pipe.exists(in_progress_key_prefix + job_id)
        score, in_progress = await pipe.execute()
    return score is not None and not in_progress


async def push_syncs(queue: ArqRedis, jobs: Sequence[tuple[int, int, Trigger]]) -> None:
    """The receiver's enqueue of (project, generation, trigger) jobs: one Redis round trip for all.

    arq's `enqueue_job` WATCHes the job key and checks it exists before a MULTI, so that a job id is
    only ever queued once: three round trips per job. A sync job id carries a generation that
    PostgreSQL handed out exactly once, so that check can never fire here; writing each job and its
    queue entry in one MULTI is enough. Were one ever queued twice, arq skips a job already in
    progress and the sync itself returns at once when its generation is done.
    """
    if not jobs:
        return
    now = timestamp_ms()
    with translated():
        async with queue.pipeline(transaction=True) as pipe:
            for project_id, gen, trigger in jobs:
                job_id = sync_job_id(project_id, gen)
                job = serialize_job(SYNC, (project_id, str(trigger)), {}, None, now, serializer=queue.job_serializer)
                pipe.psetex(job_key_prefix + job_id, queue.expires_extra_ms, job)
                pipe.zadd(queue.default_queue_name, {job_id: now})
            await pipe.execute()


async def enqueue_once(queue: ArqRedis, function: str, job_id: str, *args: object) -> bool:
    """Enqueue a job under a deterministic id (a redelivered event does not run twice)."""
    with translated():
        job = await queue.enqueue_job(function, *args, _job_id=job_id)
    return job is not None
