"""The Redis adapter: every Redis call that can fail runs inside `translated`, the only place that knows redis-py.

Redis holds the arq queue (the jobs `app.jobs.queue` enqueues), the agents' refresh limits and the
workers' health records. Its client is arq's `ArqRedis` (a redis-py client) and, for `javakb
doctor`, a client of the configured URL. A failure of any of them (`RedisError`: connection refused,
timeout, a reply error; or the `OSError` beneath) leaves this module as `QueueUnavailableError`
chained to the original, as asyncpg's leave `app.db` as `StorageError`. The callers decide what an
outage means: a delivery deferred, a nudge left to the reconcile sweep, a 503.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.asyncio as aioredis
from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from redis.exceptions import RedisError

from app.core.errors import QueueUnavailableError
from app.core.unreachable import unreachable, url_target

DOCTOR_TIMEOUT_S = 5


@contextmanager
def translated() -> Iterator[None]:
    """Run Redis calls; their failure raises `QueueUnavailableError` ("<redis error type>: <message>").

    redis-py's timeouts are `RedisError`s; a socket's own (`TimeoutError`, `ConnectionError`) are `OSError`s.
    """
    try:
        yield
    except (RedisError, OSError) as exc:
        raise QueueUnavailableError(f"{type(exc).__name__}: {exc}") from exc


async def open_pool(url: str, queue_name: str) -> ArqRedis:
    """Arq's pool of the Redis at `url` (arq retries the first connection a few times).

    Raises:
        QueueUnavailableError: Redis cannot be reached (the message says where, and what to do).
    """
    try:
        return await create_pool(RedisSettings.from_dsn(url), default_queue_name=queue_name)
    except (RedisError, OSError) as exc:
        raise QueueUnavailableError(unreachable("Redis", "JAVAKB_REDIS__URL", url_target(url), exc)) from exc


async def ping(queue: ArqRedis) -> None:
    """Whether Redis answers (readiness); raises `QueueUnavailableError` when not."""
    with translated():
        await queue.ping()


async def ping_url(url: str) -> None:
    """Ping the Redis at `url` with a client of its own (`javakb doctor`, before any pool exists)."""
    client = aioredis.Redis.from_url(url, socket_connect_timeout=DOCTOR_TIMEOUT_S, socket_timeout=DOCTOR_TIMEOUT_S)
    try:
        with translated():
            await client.ping()
    finally:
        await client.aclose()


async def take_limit(queue: ArqRedis, key: str, every_ms: int) -> int | None:
    """Take `key` for `every_ms` (None: taken now), or the milliseconds until whoever holds it lets go.

    One key with that expiry, set only when absent: the limit holds across every replica.
    """
    with translated():
        if await queue.set(key, "1", nx=True, px=every_ms):
            return None
        wait_ms: int = await queue.pttl(key)
    return wait_ms


async def health_record(queue: ArqRedis, key: str, name: str) -> tuple[bytes | None, int]:
    """A worker's arq health record under `key` (None when absent) and how many jobs queue `name` holds."""
    with translated():
        record: bytes | None = await queue.get(key)
        queued: int = await queue.zcard(name)
    return record, int(queued)


async def queue_head(queue: ArqRedis, name: str, now_ms: float) -> tuple[int, float | None]:
    """How many jobs queue `name` holds, and the score (due time, ms) of its oldest due job (None: none due)."""
    with translated():
        depth: int = await queue.zcard(name)
        due = await queue.zrangebyscore(name, "-inf", now_ms, start=0, num=1, withscores=True)
    return int(depth), (float(due[0][1]) if due else None)


async def put_value(queue: ArqRedis, key: str, value: str, ttl_s: int) -> None:
    """Set `key` to `value` for `ttl_s` seconds (an admin page session)."""
    with translated():
        await queue.set(key, value, ex=ttl_s)


async def get_value(queue: ArqRedis, key: str) -> str | None:
    """The value of `key` (None when absent or expired)."""
    with translated():
        value: bytes | None = await queue.get(key)
    return None if value is None else value.decode()


async def drop_value(queue: ArqRedis, key: str) -> None:
    """Delete `key` (absent is fine)."""
    with translated():
        await queue.delete(key)
