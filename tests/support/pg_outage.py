"""A PostgreSQL outage for one test database: new connections refused, open ones closed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from tests.conftest import SERVER


async def set_outage(dsn: str, *, down: bool) -> None:
    """Refuse (or allow again) connections to the database of `dsn`, closing the open ones."""
    database = dsn.rsplit("/", 1)[1]
    conn = await asyncpg.connect(f"{SERVER}/postgres")
    try:
        await conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS {"false" if down else "true"}')
        if down:
            await conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", database)
    finally:
        await conn.close()


@asynccontextmanager
async def postgres_down(dsn: str) -> AsyncIterator[None]:
    """The database is unreachable inside the block, and reachable again after it."""
    await set_outage(dsn, down=True)
    try:
        yield
    finally:
        await set_outage(dsn, down=False)
