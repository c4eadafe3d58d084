"""A project's visibility change reaches the access model within the access TTL, hook or no hook (issue 24).

Who may read an internal or public project is read from `projects.visibility` in PostgreSQL. A
`project_update` delivery keeps it, and the sweep's hourly full listing repairs a lost one; but a
project made private whose delivery was lost would stay readable org-wide for up to that hour. So
before GitLab identities are resolved, `VisibilityRefresh.fresh` asks GitLab, at most every
`every_s`, for the projects whose row changed recently, with the service's own token:

    GET /projects?updated_after=<cutoff>&order_by=updated_at&sort=asc&per_page=100&page=N

(`updated_after` needs `order_by=updated_at`, GitLab 15.10+, `lib/api/projects.rb`). Changing
`visibility_level` updates the `projects` row, so its `updated_at` moves: usually a single short page.
The cutoff is the previous listing's start less `SLACK` (GitLab's clock against ours, a transaction
committed after its timestamp); the first listing after a start looks back `LOOKBACK` (the full
sweep's hour covers anything older). The answer is recorded like the sweep's (`set_projects_access`).

`fresh` returns the time (on the identities' clock) the recorded visibility is as of, and a resolved
access is cached until that time plus the TTL, not its own lookup time plus the TTL: so a change GitLab
made at `c` is out of every cached access by `c + ttl` (docs/security.md states the bound and its limits).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from app.auth.identity import OpenSet
from app.core.errors import GitLabUnavailableError
from app.core.settings import Settings
from app.gitlab.client import rest_root

logger = logging.getLogger(__name__)

SLACK = timedelta(minutes=5)
LOOKBACK = timedelta(hours=1)
PAGE = 100
MAX_PAGES = 50
"""A listing longer than this (5,000 projects changed in minutes) stops there; the full sweep has the rest."""

AccessRow = tuple[int, str, str]
"""(project id, visibility, repository access level), as `Database.set_projects_access` takes them."""
ListUpdated = Callable[[datetime], Awaitable[list[AccessRow]]]
Record = Callable[[Sequence[AccessRow]], Awaitable[int]]


class VisibilityRefresh:
    """Keeps `projects.visibility` as fresh as `every_s` from GitLab's listing of recently updated projects."""

    def __init__(
        self,
        list_updated: ListUpdated,
        record: Record,
        *,
        every_s: float,
        clock: Callable[[], float],
        wall: Callable[[], datetime] = lambda: datetime.now(tz=UTC),
    ) -> None:
        self._list_updated = list_updated
        self._record = record
        self._every_s = every_s
        self._clock = clock
        self._wall = wall
        self._as_of: float | None = None
        self._listed_at: datetime | None = None
        self._lock = asyncio.Lock()

    async def fresh(self) -> float:
        """Refresh when the last refresh is older than `every_s`; the clock time the recorded visibility is as of.

        Raises:
            GitLabUnavailableError: GitLab did not answer (the caller answers 503, never "no access").
        """
        if self._current():
            return self._as_of or 0.0
        async with self._lock:  # concurrent lookups share one listing
            if self._current():
                return self._as_of or 0.0
            started, wall = self._clock(), self._wall()
            cutoff = (self._listed_at or wall - LOOKBACK) - SLACK
            rows = await self._list_updated(cutoff)
            changed = await self._record(rows) if rows else 0
            if changed:
                logger.info(
                    "visibility: %d of %d recently updated projects changed who may read them", changed, len(rows)
                )
            self._as_of, self._listed_at = started, wall
            return started

    def _current(self) -> bool:
        return self._as_of is not None and self._clock() - self._as_of < self._every_s


async def open_set(read: Callable[[], Awaitable[dict[int, str]]], refresh: VisibilityRefresh | None) -> OpenSet:
    """The open projects as recorded, read *after* the refresh: never older than the `as_of` they carry."""
    as_of = await refresh.fresh() if refresh is not None else None
    return OpenSet(await read(), as_of)


def refresh_interval(every_s: float, ttl_s: float) -> float:
    """How often visibility is listed: as configured, but at most half the TTL (an access is cached `ttl - age`)."""
    return min(every_s, ttl_s / 2)


def build_refresh(
    settings: Settings, http: Callable[[], httpx.AsyncClient], record: Record, clock: Callable[[], float]
) -> VisibilityRefresh | None:
    """The web app's refresh, with the service's GitLab token; None without one (hooks and the sweep only)."""
    root = rest_root(settings.gitlab)
    if root is None:
        return None
    url, headers = root

    async def list_updated(after: datetime) -> list[AccessRow]:
        return await updated_projects(http(), url, headers, after, timeout_s=settings.gitlab.timeout_s)

    every_s = refresh_interval(settings.access.visibility_every_s, settings.access.ttl_s)
    return VisibilityRefresh(list_updated, record, every_s=every_s, clock=clock)


async def updated_projects(
    http: httpx.AsyncClient, root: str, headers: dict[str, str], after: datetime, *, timeout_s: float
) -> list[AccessRow]:
    """Who may read each project GitLab updated after `after` (offset pages: the listing is short)."""
    query = {"updated_after": after.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "order_by": "updated_at",
             "sort": "asc", "per_page": str(PAGE)}  # fmt: skip
    rows: list[AccessRow] = []
    for page in range(1, MAX_PAGES + 1):
        body = await _page(http, f"{root}/projects", {**query, "page": str(page)}, headers, timeout_s)
        rows += [row for p in body if (row := _access_row(p)) is not None]
        if len(body) < PAGE:
            return rows
    logger.warning("visibility: more than %d projects updated since %s; the full sweep lists the rest",
                   PAGE * MAX_PAGES, after.isoformat())  # fmt: skip
    return rows


async def _page(
    http: httpx.AsyncClient, url: str, params: dict[str, str], headers: dict[str, str], timeout_s: float
) -> list[Any]:
    try:
        response = await http.get(url, params=params, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise GitLabUnavailableError(f"GitLab did not answer: {type(exc).__name__}") from exc
    if response.status_code != 200:
        raise GitLabUnavailableError(f"GitLab answered {response.status_code} to the visibility listing")
    try:
        body = response.json()
    except ValueError as exc:
        raise GitLabUnavailableError("GitLab answered something that is not JSON") from exc
    if not isinstance(body, list):
        raise GitLabUnavailableError("GitLab /projects answered an unexpected body")
    return body


def _access_row(entity: Any) -> AccessRow | None:
    if not isinstance(entity, dict) or not isinstance(entity.get("id"), int):
        return None
    visibility, repository = entity.get("visibility"), entity.get("repository_access_level")
    if not isinstance(visibility, str) or not isinstance(repository, str):
        return None
    return entity["id"], visibility, repository
