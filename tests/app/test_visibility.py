"""Visibility changes without their hook (issue 24): GitLab's listing of updated projects, its cadence, the cache.

Over the fake GitLab on loopback (`updated_after` needs `order_by=updated_at`, as in GitLab); the
end-to-end check, every tool over real HTTP, is `tests/mcp_server/test_access.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from app.auth.identity import GitLabIdentities, OpenSet
from app.auth.visibility import LOOKBACK, SLACK, AccessRow, VisibilityRefresh, refresh_interval, updated_projects
from app.core.errors import GitLabUnavailableError
from testkit.fake_gitlab import FakeGitLab
from tests.support.tenants import ManualClock


@pytest.fixture
def gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path) as gl:
        yield gl


async def test_the_listing_names_only_projects_updated_since_and_what_they_are_now(gitlab: FakeGitLab) -> None:
    old, changed = gitlab.create_project("g/old"), gitlab.create_project("g/changed")
    cutoff = datetime.now(tz=UTC) + timedelta(seconds=1)
    gitlab.clock = lambda: cutoff + timedelta(seconds=5)  # GitLab's clock: the change comes after the cutoff
    gitlab.set_project_attributes(changed.id, visibility="internal")
    api = f"{gitlab.url}/api/v4"

    async with httpx.AsyncClient() as http:
        rows = await updated_projects(http, api, {"PRIVATE-TOKEN": gitlab.token}, cutoff, timeout_s=10)
        gitlab.fail_next(1, 502, path_contains="/api/v4/projects")
        with pytest.raises(GitLabUnavailableError):
            await updated_projects(http, api, {"PRIVATE-TOKEN": gitlab.token}, cutoff, timeout_s=10)

    assert rows == [(changed.id, "internal", "enabled")]
    assert old.id not in {r[0] for r in rows}


class Listing:
    """What the refresh asked GitLab (each cutoff) and recorded."""

    def __init__(self) -> None:
        self.cutoffs: list[datetime] = []
        self.recorded: list[AccessRow] = []

    async def list_updated(self, after: datetime) -> list[AccessRow]:
        self.cutoffs.append(after)
        await asyncio.sleep(0)  # let concurrent callers pile up on the lock
        return [(7, "private", "enabled")]

    async def record(self, rows: Sequence[AccessRow]) -> int:
        self.recorded += rows
        return len(rows)


async def test_a_refresh_runs_once_per_interval_from_the_last_listing() -> None:
    listing, clock = Listing(), ManualClock()
    walls = iter([datetime(2026, 12, 6, 8, 0, tzinfo=UTC), datetime(2026, 12, 6, 8, 0, 20, tzinfo=UTC)])
    refresh = VisibilityRefresh(listing.list_updated, listing.record, every_s=15, clock=clock, wall=lambda: next(walls))

    first = await asyncio.gather(*(refresh.fresh() for _ in range(5)))
    clock.advance(10)
    cached = await refresh.fresh()
    clock.advance(10)
    second = await refresh.fresh()

    assert first == [1000.0] * 5 and cached == 1000.0 and second == 1020.0  # as of each listing's start
    assert listing.cutoffs == [
        datetime(2026, 12, 6, 8, 0, tzinfo=UTC) - LOOKBACK - SLACK,
        datetime(2026, 12, 6, 8, 0, tzinfo=UTC) - SLACK,
    ]
    assert listing.recorded == [(7, "private", "enabled")] * 2
    assert refresh_interval(15, 60) == 15 and refresh_interval(45, 60) == 30


async def test_an_access_is_cached_from_when_visibility_was_read_not_from_its_lookup(gitlab: FakeGitLab) -> None:
    user = gitlab.directory.add_user("pat")
    clock = ManualClock()
    read_at = clock()
    clock.advance(40)  # the open projects were read 40 s before this lookup

    async def open_projects() -> OpenSet:
        return OpenSet({}, read_at)

    async with httpx.AsyncClient() as http:
        identities = GitLabIdentities(gitlab.url, lambda: http, open_projects, ttl_s=60, clock=clock)
        await identities.resolve(user.token)
        calls = gitlab.call_count("/api/v4/user")
        clock.advance(19)
        await identities.resolve(user.token)
        assert gitlab.call_count("/api/v4/user") == calls  # still cached at read_at + 59
        clock.advance(1)
        await identities.resolve(user.token)
        assert gitlab.call_count("/api/v4/user") == calls + 1  # expired at read_at + ttl, not lookup + ttl
