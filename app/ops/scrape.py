"""`GET /metrics` of either process: refresh the gauges read at scrape time, then the text exposition.

Counters and histograms are updated where things happen (`app.core.metrics`); queue depth and age
come from Redis, project states and the index lag from PostgreSQL, read here in a few aggregate
queries per scrape. A store that is down leaves its gauges as they were (and is logged): the rest
of the scrape still answers.

Access (docs/decisions.md, "Metrics"): a bearer token from `JAVAKB_METRICS_TOKENS` (digests, as the
admin tokens), never an admin token; without any configured, `/metrics` answers 404.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from app.auth.identity import bearer_token, match_token
from app.core import metrics
from app.core.errors import QueueUnavailableError, ServiceError
from app.core.settings import Settings
from app.jobs.redis import queue_head
from app.runtime import Deps

logger = logging.getLogger(__name__)


def scrape_status(settings: Settings, authorization: str | None) -> int:
    """200 when the caller may read the metrics, 401 when not, 404 when no metrics token is configured."""
    if not settings.metrics_tokens:
        return 404
    token = bearer_token(authorization)
    return 200 if token is not None and match_token(token, settings.metrics_tokens) is not None else 401


async def scrape(deps: Deps, clock: Callable[[], float] = time.time) -> bytes:
    """The exposition after refreshing what is read at scrape time."""
    await _queue(deps, clock())
    await _projects(deps)
    return metrics.exposition()


async def _queue(deps: Deps, now: float) -> None:
    if deps.queue is None:
        return
    try:
        depth, oldest_ms = await queue_head(deps.queue, deps.settings.redis.queue, now * 1000)
    except QueueUnavailableError as exc:
        logger.warning("metrics: Redis: %s", exc)
        return
    metrics.QUEUE_DEPTH.set(depth)
    metrics.QUEUE_AGE.set(max(0.0, now - oldest_ms / 1000) if oldest_ms is not None else 0.0)


async def _projects(deps: Deps) -> None:
    if deps.db is None:
        return
    try:
        summary = await deps.db.lag_summary(metrics.LAG_BUCKETS_S, metrics.LAG_TOP)
    except ServiceError as exc:
        logger.warning("metrics: PostgreSQL: %s", exc)
        return
    metrics.PROJECTS.clear()
    for state, n in summary.states.items():
        metrics.PROJECTS.labels(state=state).set(n)
    for bound, n in summary.at_least.items():
        metrics.LAGGING.labels(ge=f"{bound:g}").set(n)
    metrics.LAG_MAX.set(summary.top[0][1] if summary.top else 0.0)
    metrics.PROJECT_LAG.clear()  # only the current top: a project that caught up leaves the set
    for repo_path, lag in summary.top:
        metrics.PROJECT_LAG.labels(project=repo_path).set(lag)


def guarded(deps: Deps) -> Callable[[str | None], Awaitable[tuple[int, bytes]]]:
    """The worker health port's `/metrics`: (status, body) for a request's Authorization header."""

    async def answer(authorization: str | None) -> tuple[int, bytes]:
        status = scrape_status(deps.settings, authorization)
        return (200, await scrape(deps)) if status == 200 else (status, b"")

    return answer
