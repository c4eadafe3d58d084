"""Recording deliveries: what a webhook asks for is stored in PostgreSQL, then its jobs are enqueued.

The receiver (`hooks.receiver`) calls this for each authenticated, parsed delivery, and the worker's
`replay_delivery` calls it for a delivery the receiver could only queue (PostgreSQL was down): one
recording logic, below both. Pushes that arrive together share one PostgreSQL and one Redis round
trip (`GroupCommit`). The queue is only a nudge: if Redis is down the delivery is still recorded,
and the worker's reconcile sweep picks the project up.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Sequence

from app.core import metrics
from app.core.context import bound
from app.core.errors import PayloadError, QueueUnavailableError, StorageError, UnstorableError
from app.core.events import Event, Ignored, ProjectDestroyed, ProjectMoved, ProjectUpdated, SyncRequested
from app.core.states import DeliveryOutcome
from app.db import KeyedPush
from app.jobs.queue import (
    MOVE,
    PURGE,
    REFRESH,
    REPLAY,
    enqueue_once,
    move_job_id,
    purge_job_id,
    push_syncs,
    refresh_job_id,
    replay_job_id,
)
from app.runtime import ServiceDeps
from app.sync.group_commit import GroupCommit
from app.sync.scope import screen

logger = logging.getLogger(__name__)

PushResult = int | None | PayloadError
"""A push's generation, None for a duplicate, or why PostgreSQL could not store it."""

QUEUE_DOWN = "Redis is unavailable: {what} is recorded, and the worker's reconcile sweep enqueues it once Redis is back"
"""The detail of a delivery recorded but not enqueued (answered `deferred`, as with PostgreSQL down)."""


class DeliveryRecorder:
    """Records deliveries and enqueues their jobs; concurrent pushes share their round trips."""

    def __init__(self, deps: ServiceDeps, *, max_batch: int = 256) -> None:
        self.deps = deps
        self._pushes: GroupCommit[KeyedPush, tuple[PushResult, bool]] = GroupCommit(
            self._record_pushes, max_batch=max_batch
        )

    async def handle_or_defer(self, event: Event, key: str) -> tuple[DeliveryOutcome, str]:
        """`handle`, or with PostgreSQL down, queue the event for the worker to replay (`replay_delivery`).

        Logged with the delivery's and project's ids, counted by event and outcome (`/metrics`).
        Raises `StorageError` only when Redis cannot take it either.
        """
        with bound(delivery_id=key, project_id=getattr(event, "project_id", None)):
            outcome, detail = await self._handle_or_defer(event, key)
        metrics.DELIVERIES.labels(event=metrics.event_label(event.event), outcome=outcome).inc()
        return outcome, detail

    async def _handle_or_defer(self, event: Event, key: str) -> tuple[DeliveryOutcome, str]:
        try:
            return await self.handle(event, key)
        except StorageError as exc:
            logger.warning("PostgreSQL unavailable, delivery %s deferred to the worker: %s", key, exc)
            try:
                await enqueue_once(self.deps.queue, REPLAY, replay_job_id(key), event, key)
            except QueueUnavailableError as queue_exc:
                raise StorageError(f"{exc}; and the queue is unavailable: {queue_exc}") from queue_exc
            return (
                DeliveryOutcome.DEFERRED,
                "PostgreSQL is unavailable: the worker records this delivery when it is back",
            )

    async def handle(self, event: Event, key: str) -> tuple[DeliveryOutcome, str]:
        """Record the delivery and enqueue what it asks for; return (outcome, detail)."""
        event = screen(event, self.deps.settings.scope)  # a push out of the indexing scope is ignored
        if isinstance(event, SyncRequested):
            gen, queued = await self._pushes.submit((key, event))
            if isinstance(gen, PayloadError):
                raise gen
            if gen is None:
                return DeliveryOutcome.DUPLICATE, "delivery seen before"
            return _outcome(queued, f"sync of project {event.project_id} (generation {gen})")
        db = self.deps.db
        if isinstance(event, Ignored):
            fresh = await db.record_delivery(
                key, event.event, event.project_id, None, None, DeliveryOutcome.IGNORED, event.reason
            )
            return (DeliveryOutcome.IGNORED if fresh else DeliveryOutcome.DUPLICATE), event.reason
        job_id, function, args = _lifecycle_job(event, key)
        fresh = await db.record_delivery(
            key, event.event, event.project_id, None, None, DeliveryOutcome.ENQUEUED, function
        )
        if not fresh:
            return DeliveryOutcome.DUPLICATE, "delivery seen before"
        queued = await _nudge(enqueue_once(self.deps.queue, function, job_id, *args))
        return _outcome(queued, f"{function} of project {event.project_id}")

    async def _record_pushes(self, pushes: Sequence[KeyedPush]) -> list[tuple[PushResult, bool]]:
        # One key twice in a batch (a resend racing its original) is the second one's duplicate.
        first: dict[str, int] = {}
        for i, (key, _) in enumerate(pushes):
            first.setdefault(key, i)
        distinct = [pushes[i] for i in first.values()]
        recorded = dict(zip(first, await self._record_isolated(distinct), strict=True))
        jobs = [(p.project_id, gen, p.event) for key, p in distinct if isinstance(gen := recorded[key], int)]
        queued = await _nudge(push_syncs(self.deps.queue, jobs))
        return [(recorded[key] if first[key] == i else None, queued) for i, (key, _) in enumerate(pushes)]

    async def _record_isolated(self, pushes: Sequence[KeyedPush]) -> list[PushResult]:
        """Record a batch; when PostgreSQL cannot store one of its values, record each push on its own.

        The edge validates what it can, so this is the last line: one bad row must not turn its
        neighbours' answers into errors (nor into "deferred", as a StorageError would).
        """
        db = self.deps.db
        try:
            return list(await db.record_sync_deliveries(pushes))
        except UnstorableError as exc:
            if len(pushes) == 1:
                return [exc]
        return [result for push in pushes for result in await self._record_isolated([push])]


def _lifecycle_job(
    event: ProjectDestroyed | ProjectMoved | ProjectUpdated, key: str
) -> tuple[str, str, tuple[object, ...]]:
    if isinstance(event, ProjectDestroyed):
        return purge_job_id(event.project_id, key), PURGE, (event.project_id,)
    if isinstance(event, ProjectMoved):
        return move_job_id(event.project_id, key), MOVE, (event.project_id, event.new_path)
    return refresh_job_id(event.project_id, key), REFRESH, (event.project_id,)


async def _nudge(enqueue: Awaitable[object]) -> bool:
    """Whether the jobs reached the queue; when Redis is down they are left to the reconcile sweep."""
    try:
        await enqueue
    except QueueUnavailableError as exc:
        # The delivery is recorded in PostgreSQL; the reconcile sweep enqueues what is behind.
        logger.warning("queue unavailable, left to the reconcile sweep: %s", exc)
        return False
    return True


def _outcome(queued: bool, what: str) -> tuple[DeliveryOutcome, str]:
    """`enqueued` only when the job is in the queue; recorded but not queued is `deferred`."""
    if queued:
        return DeliveryOutcome.ENQUEUED, what
    return DeliveryOutcome.DEFERRED, QUEUE_DOWN.format(what=what)
