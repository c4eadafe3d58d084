"""The sync environment most of these tests run in (a file with other settings defines its own `env`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from testkit.sync_env import SyncEnv, sync_env


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    """Fake GitLab, real PostgreSQL and Redis, the worker, an embedded store: defaults throughout."""
    async with sync_env(tmp_path, clean_db, clean_redis) as e:
        yield e
