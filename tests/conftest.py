"""Real PostgreSQL and Redis for the whole suite: one database per test run, flushed state per test.

The services are the machine's own (scripts/services starts them); the DSNs can be overridden with
JAVAKB_TEST_POSTGRES (a server URL without database) and JAVAKB_TEST_REDIS.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
import pytest_asyncio
import redis
import redis.asyncio as aioredis

from app.db.migrate import apply_migrations

# Every phase of every test ends (tests/support/deadlines.py); pytester runs the plugin's own tests.
pytest_plugins = ["pytester", "tests.support.deadlines"]

SERVER = os.environ.get("JAVAKB_TEST_POSTGRES", "postgresql://root@127.0.0.1:5432")
REDIS = os.environ.get("JAVAKB_TEST_REDIS", "redis://127.0.0.1:6379/9")
TABLES = (
    "projects", "index_jobs", "deliveries", "file_manifest", "backfills", "backfill_projects", "sweeps",
    "rebuilds", "rebuild_projects", "index_requests", "project_dependencies", "dependency_files", "libraries",
    "project_groups",
)  # fmt: skip


async def _admin(statement: str) -> None:
    conn = await asyncpg.connect(f"{SERVER}/postgres")
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    """A fresh database for this test run, migrated once, dropped at the end."""
    name = f"javakb_test_{uuid.uuid4().hex[:12]}"
    dsn = f"{SERVER}/{name}"
    apply_migrations(dsn)  # creates the database, then applies every migration
    yield dsn
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def truncate(dsn: str) -> None:
    """Empty every table of the test database."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY")
    finally:
        await conn.close()


def reset_services(dsn: str) -> None:
    """Empty the test database and flush the test Redis (for module-scoped fixtures, outside a loop)."""
    asyncio.run(truncate(dsn))
    client = redis.Redis.from_url(REDIS)
    try:
        client.flushdb()
    finally:
        client.close()


@pytest_asyncio.fixture
async def clean_db(pg_dsn: str) -> AsyncIterator[str]:
    """The test database with every table emptied before the test."""
    await truncate(pg_dsn)
    yield pg_dsn


@pytest_asyncio.fixture
async def clean_redis() -> AsyncIterator[str]:
    """The test Redis database, flushed before the test."""
    client = aioredis.Redis.from_url(REDIS)
    try:
        await client.flushdb()
    finally:
        await client.aclose()
    yield REDIS
