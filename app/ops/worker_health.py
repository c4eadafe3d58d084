"""The sync worker's health check: arq's own health record, one key per worker, served over HTTP for probes.

arq's poll loop writes a record (`j_complete=... j_ongoing=... queued=...`) under its health check key
every `HEALTH_CHECK_INTERVAL_S` seconds with a time to live one second longer (`Worker.record_health`),
and deletes it when the worker closes. A worker is healthy while its record exists: its loop runs and
reaches Redis. arq's default key is one per queue, which every replica would refresh for the others;
`health_key` gives each worker its own (`<queue>:health-check:<name>`, the name being the pod's host
name unless `JAVAKB_WORKER__NAME` says otherwise).

`serve_health` answers `GET /healthz` on `JAVAKB_WORKER__HEALTH_PORT` from the worker's own event
loop, so a blocked loop answers nothing: 200 with the record and the queue length, 503 without a
record or without Redis. It is a few lines of asyncio rather than uvicorn because uvicorn takes over
SIGTERM, which arq's worker needs for its graceful stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from arq.connections import ArqRedis

from app.core.errors import QueueUnavailableError
from app.core.metrics import CONTENT_TYPE
from app.core.settings import Settings
from app.jobs.redis import health_record

HEALTH_CHECK_INTERVAL_S = 30
HEALTH_PATH = "/healthz"
MAX_REQUEST_BYTES = 8192
READ_TIMEOUT_S = 5.0

METRICS_PATH = "/metrics"

Report = tuple[int, dict[str, Any]]
Metrics = Callable[[str | None], Awaitable[tuple[int, bytes]]]  # Authorization header -> (status, exposition)


def health_key(settings: Settings) -> str:
    """This worker's own arq health check key."""
    return f"{settings.redis.queue}:health-check:{settings.worker.name or socket.gethostname()}"


async def health_report(redis: ArqRedis, key: str, queue: str) -> Report:
    """The status code and body of `/healthz`: 200 while the worker's record exists, else 503."""
    try:
        record, queued = await health_record(redis, key, queue)
    except QueueUnavailableError as exc:
        return 503, {"status": "error", "error": f"Redis: {exc}"}
    if record is None:
        return 503, {"status": "error", "error": f"no health record under {key}: the worker is not polling"}
    return 200, {"status": "ok", "record": record.decode(errors="replace"), "queued": queued}


@asynccontextmanager
async def health_endpoint(
    settings: Settings, redis: ArqRedis, metrics: Metrics | None = None
) -> AsyncIterator[asyncio.Server | None]:
    """`/healthz` (and `/metrics`) of the worker configured by `settings` while the block runs (none with port 0)."""
    if not settings.worker.health_port:
        yield None
        return
    report = partial(health_report, redis, health_key(settings), settings.redis.queue)
    server = await serve_health(report, settings.host, settings.worker.health_port, metrics)
    try:
        yield server
    finally:
        server.close()


async def serve_health(
    report: Callable[[], Awaitable[Report]], host: str, port: int, metrics: Metrics | None = None
) -> asyncio.Server:
    """Listen on `host:port`: `GET /healthz` answers `report()`, `GET /metrics` `metrics(authorization)`; else 404."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            path, authorization = await _request_path(reader)
            if path == METRICS_PATH and metrics is not None:
                status, text = await metrics(authorization)
                writer.write(_raw_response(status, text, CONTENT_TYPE if status == 200 else "text/plain"))
            else:
                status, body = await report() if path == HEALTH_PATH else (404, {"error": "not found"})
                writer.write(_response(status, body))
            await writer.drain()
        except (TimeoutError, ValueError, ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a slow or malformed client gets nothing
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    return await asyncio.start_server(handle, host, port, limit=MAX_REQUEST_BYTES)


async def _request_path(reader: asyncio.StreamReader) -> tuple[str, str | None]:
    """The path of a GET request and its Authorization header, once its headers are read.

    Raises:
        ValueError: not a GET request line.
    """
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    if method != "GET":
        raise ValueError(method)
    headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    authorization = next((v.strip() for k, v in headers.items() if k.strip().lower() == "authorization"), None)
    return target.split("?", 1)[0], authorization


_REASONS = {200: "OK", 401: "Unauthorized", 404: "Not Found", 503: "Service Unavailable"}


def _response(status: int, body: dict[str, Any]) -> bytes:
    return _raw_response(status, json.dumps(body).encode(), "application/json")


def _raw_response(status: int, payload: bytes, content_type: str) -> bytes:
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + payload
