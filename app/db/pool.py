"""The PostgreSQL connection pool, the one place asyncpg's errors are translated, and project locks.

Every asyncpg call runs inside `translated`, the one place where its errors become `StorageError`
(or `UnstorableError` for a value PostgreSQL refuses), as httpx maps httpcore's exceptions at its
transport boundary. The query classes beside this module add the SQL, one table family each.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Self

import asyncpg

from app.core.errors import StorageError, UnstorableError

# What a lost or refused connection raises: asyncpg's interface errors (a connection closed under a
# query) and its internal client errors (a pooled connection left mid-protocol by a terminated backend).
_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError)
_LOCK_NAMESPACE = b"javakb:project:"  # hashed into every lock key: keeps ours apart from other users' locks


GENERATIONS_KEY = int.from_bytes(hashlib.blake2b(b"javakb:generations", digest_size=8).digest(), "big", signed=True)
"""Held shared by every project lock, exclusively by a model rebuild's start and switch (`generations_lock`)."""


def lock_key(project_id: int) -> int:
    """The advisory lock key of a project: the first 8 bytes of BLAKE2b("javakb:project:<id>"), as a bigint.

    `pg_advisory_lock(int4, int4)` with (namespace, id) broke for ids of 2^31 and up; one bigint key
    cannot hold a namespace and a 64-bit id together, so both are hashed. Every int64 id has a key,
    and a collision (about n^2 / 2^65 for n projects) only makes two projects take turns.
    """
    digest = hashlib.blake2b(_LOCK_NAMESPACE + str(project_id).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def _unlock(conn: Any, project_id: int) -> None:
    """Release a project's lock; when the session cannot be reached, end it (the lock ends with it).

    Never raises: during an outage the session is usually gone already, or the pool closed and took
    the connection back (then `terminate` itself raises `InterfaceError`), and either way the lock is
    released. An error here must not hide the job's own error from its retry policy.
    """
    try:
        await conn.execute(
            "SELECT pg_advisory_unlock($1), pg_advisory_unlock_shared($2)", lock_key(project_id), GENERATIONS_KEY
        )
    except _ERRORS:
        with contextlib.suppress(*_ERRORS):
            conn.terminate()


@contextmanager
def translated(message: str = "PostgreSQL query failed") -> Iterator[None]:
    """Run asyncpg calls, turning a refused value into `UnstorableError` and any other failure into `StorageError`."""
    try:
        yield
    except asyncpg.DataError as exc:
        raise UnstorableError(f"PostgreSQL cannot store a value: {_short(exc)}") from exc
    except _ERRORS as exc:
        raise StorageError(f"{message}: {exc}") from exc


def storable(text: str) -> bool:
    """Whether PostgreSQL can hold `text` (no NUL, no lone surrogate): a lookup of any other text finds nothing."""
    if "\x00" in text:
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _short(exc: Exception, limit: int = 200) -> str:
    """An error message cut to `limit` characters: asyncpg's data errors quote the offending input."""
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."


class Pool:
    """One asyncpg pool, its query helpers and the project locks its sessions hold."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._held: dict[int, Any] = {}  # project id → the connection whose session holds its lock

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 1, max_size: int = 10) -> Self:
        """Open a pool."""
        with translated("cannot connect to PostgreSQL"):
            pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size)
        return cls(pool)

    async def ping(self) -> None:
        """Raise `StorageError` unless PostgreSQL answers."""
        await self._fetchval("SELECT 1")

    async def close(self) -> None:
        """Close the pool."""
        with translated("closing the PostgreSQL pool failed"):
            await self.pool.close()

    @asynccontextmanager
    async def project_lock(self, project_id: int) -> AsyncIterator[bool]:
        """Hold a session advisory lock for one project while the block runs; yields False when busy.

        The lock lives on one pooled connection, so a killed worker releases it when its
        connection drops: no stale locks, no TTL to tune.
        """
        with translated("PostgreSQL connection failed"):
            conn = await self.pool.acquire()
        try:
            with translated():
                got = await conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_key(project_id))
            if got:
                self._held[project_id] = conn
            try:
                if got:  # a rebuild's start or switch holds it exclusively for a moment: wait for it
                    with translated():
                        await conn.execute("SELECT pg_advisory_lock_shared($1)", GENERATIONS_KEY)
                yield bool(got)
            finally:
                if got:
                    self._held.pop(project_id, None)
                    await _unlock(conn, project_id)
        finally:
            with contextlib.suppress(*_ERRORS):  # a connection the pool took back or that died: nothing to free
                await self.pool.release(conn)

    @asynccontextmanager
    async def generations_lock(self) -> AsyncIterator[Any]:
        """Hold the generations lock exclusively: no project lock is held meanwhile (a rebuild's start, its switch).

        Every project lock holds it shared, so while this block runs no sync, rebuild step or
        lifecycle job is between reading which generations to write and writing them. Yields the
        lock's connection: the block's queries must use it (`conn=`), because jobs waiting for the
        shared lock hold pool connections, and a block that needs one more could wait forever.
        """
        with translated("PostgreSQL connection failed"):
            conn = await self.pool.acquire()
        try:
            with translated():
                await conn.execute("SELECT pg_advisory_lock($1)", GENERATIONS_KEY)
            try:
                yield conn
            finally:
                with contextlib.suppress(*_ERRORS):
                    await conn.execute("SELECT pg_advisory_unlock($1)", GENERATIONS_KEY)
        finally:
            with contextlib.suppress(*_ERRORS):
                await self.pool.release(conn)

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Any]:
        """A pooled connection inside a transaction; asyncpg's errors come out as `StorageError`."""
        with translated("PostgreSQL transaction failed"):
            async with self.pool.acquire() as conn, conn.transaction():
                yield conn

    async def _fetchval(self, query: str, *args: Any, conn: Any = None) -> Any:
        with translated():
            return await (conn or self.pool).fetchval(query, *args)

    async def _fetchrow(self, query: str, *args: Any, conn: Any = None) -> asyncpg.Record | None:
        with translated():
            return await (conn or self.pool).fetchrow(query, *args)

    async def _fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        with translated():
            return await self.pool.fetch(query, *args)

    async def _execute(self, query: str, *args: Any, conn: Any = None) -> str:
        with translated():
            return str(await (conn or self.pool).execute(query, *args))
