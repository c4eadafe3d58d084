"""Job names and deterministic job ids on the arq queue.

A sync job's id carries the project's requested generation (`sync:<project>:<gen>`): every delivery
that bumps the generation gets its own job, so none is dropped by arq's id deduplication (which
also blocks an id while its result is kept), and runs that find the work already done return at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from arq.connections import ArqRedis
from arq.constants import job_key_prefix
from arq.jobs import serialize_job
from arq.utils import timestamp_ms

SYNC = "sync_project"
PURGE = "purge_project"
MOVE = "move_project"
REFRESH = "refresh_project"
BACKFILL = "backfill"
REPLAY = "replay_delivery"


async def enqueue_sync(queue: ArqRedis, project_id: int, gen: int, trigger: str) -> bool:
    """Ask the worker to sync a project up to (at least) generation `gen`; False if already queued."""
    job = await queue.enqueue_job(SYNC, project_id, trigger, _job_id=f"sync:{project_id}:{gen}")
    return job is not None


async def push_syncs(queue: ArqRedis, jobs: Sequence[tuple[int, int, str]]) -> None:
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
    async with queue.pipeline(transaction=True) as pipe:
        for project_id, gen, trigger in jobs:
            job_id = f"sync:{project_id}:{gen}"
            job = serialize_job(SYNC, (project_id, trigger), {}, None, now, serializer=queue.job_serializer)
            pipe.psetex(job_key_prefix + job_id, queue.expires_extra_ms, job)
            pipe.zadd(queue.default_queue_name, {job_id: now})
        await pipe.execute()


async def enqueue_once(queue: ArqRedis, function: str, job_id: str, *args: object) -> bool:
    """Enqueue a job under a deterministic id (a redelivered event does not run twice)."""
    job = await queue.enqueue_job(function, *args, _job_id=job_id)
    return job is not None
