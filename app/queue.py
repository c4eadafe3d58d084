"""Job names and deterministic job ids on the arq queue.

A sync job's id carries the project's requested generation (`sync:<project>:<gen>`): every delivery
that bumps the generation gets its own job, so none is dropped by arq's id deduplication (which
also blocks an id while its result is kept), and runs that find the work already done return at once.
"""

from __future__ import annotations

from arq.connections import ArqRedis

SYNC = "sync_project"
PURGE = "purge_project"
MOVE = "move_project"
REFRESH = "refresh_project"
BACKFILL = "backfill"


async def enqueue_sync(queue: ArqRedis, project_id: int, gen: int, trigger: str) -> bool:
    """Ask the worker to sync a project up to (at least) generation `gen`; False if already queued."""
    job = await queue.enqueue_job(SYNC, project_id, trigger, _job_id=f"sync:{project_id}:{gen}")
    return job is not None


async def enqueue_once(queue: ArqRedis, function: str, job_id: str, *args: object) -> bool:
    """Enqueue a job under a deterministic id (a redelivered event does not run twice)."""
    job = await queue.enqueue_job(function, *args, _job_id=job_id)
    return job is not None
