"""POST /hooks/gitlab: authenticate, parse, record, enqueue, answer. No indexing work happens here.

Order matters: the body is read with a size cap, authenticated (signature or token) before it is
parsed, then deduplicated on `Idempotency-Key` (fallback `X-Gitlab-Webhook-UUID`) in the same
PostgreSQL round trip that records the delivery and bumps the project's generation. Pushes that
arrive together share that round trip and one Redis round trip (`GroupCommit`): each is answered
only once it is recorded. The queue is only a nudge: if Redis is down the delivery is still
recorded, and the worker's reconcile sweep picks the project up. GitLab never resends a failed
delivery on its own, so if PostgreSQL is down the event is queued whole on Redis (`replay:<key>`)
and the worker records it once PostgreSQL is back (answer 202 "deferred"); only with both down is
the answer 503.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.db import KeyedPush
from app.deps import Deps
from app.errors import PayloadError, SignatureError, StorageError
from app.queue import MOVE, PURGE, REFRESH, REPLAY, enqueue_once, push_syncs
from app.scope import screen
from app.settings import GitLabSettings
from hooks.auth import check_signature, check_token, signing_key
from hooks.events import Event, Ignored, ProjectDestroyed, ProjectMoved, ProjectUpdated, SyncRequested, parse_event
from hooks.group_commit import GroupCommit

logger = logging.getLogger(__name__)

Clock = Callable[[], float]


class BodyTooLargeError(PayloadError):
    """The delivery is over the configured size limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refusing more than `limit` bytes without buffering them."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"body of {declared} bytes is above the limit of {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(f"body is above the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def authenticate(settings: GitLabSettings, request: Request, body: bytes, now: float) -> None:
    """Signature when a signing token is configured, else the shared secret token."""
    if settings.signing_token is not None:
        key = signing_key(settings.signing_token.get_secret_value())
        check_signature(key, request.headers, body, now, settings.signature_tolerance_s)
    elif settings.webhook_secret is not None:
        check_token(settings.webhook_secret.get_secret_value(), request.headers.get("x-gitlab-token"))
    else:
        raise SignatureError("no webhook secret is configured: every delivery is refused")


def delivery_key(request: Request, body: bytes) -> str:
    """`Idempotency-Key` (same on resends), else `X-Gitlab-Webhook-UUID`, else the body's digest."""
    for header in ("idempotency-key", "x-gitlab-webhook-uuid", "webhook-id"):
        value = request.headers.get(header)
        if value:
            return value
    return "sha256:" + hashlib.sha256(body).hexdigest()


def make_endpoint(clock: Clock = time.time) -> Callable[[Request], object]:
    """The Starlette endpoint (the clock is injected for signature timestamps)."""

    async def gitlab_hook(request: Request) -> JSONResponse:
        receiver: Receiver = request.state.receiver
        deps = receiver.deps
        started = time.perf_counter()
        try:
            body = await read_body(request, deps.settings.gitlab.max_body_bytes)
            authenticate(deps.settings.gitlab, request, body, clock())
            event = parse_event(_decode(body))
        except BodyTooLargeError as exc:
            return JSONResponse({"error": str(exc)}, status_code=413)
        except SignatureError as exc:
            logger.warning("refused delivery: %s", exc)
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        except PayloadError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        key = delivery_key(request, body)
        try:
            status, detail = await receiver.handle_or_defer(event, key)
        except StorageError as exc:
            logger.error("delivery %s (%s) lost: %s", key, event, exc)
            return JSONResponse({"error": "delivery not recorded, try again"}, status_code=503)
        logger.info("delivery %s %s -> %s (%.1f ms)", key, event.event, status, (time.perf_counter() - started) * 1e3)
        accepted = status in ("enqueued", "deferred")
        return JSONResponse({"status": status, "detail": detail}, status_code=202 if accepted else 200)

    return gitlab_hook


def _decode(body: bytes) -> object:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PayloadError(f"malformed JSON: {exc}") from exc


class Receiver:
    """Records deliveries and enqueues their jobs; concurrent pushes share their round trips."""

    def __init__(self, deps: Deps, *, max_batch: int = 256) -> None:
        self.deps = deps
        self._pushes: GroupCommit[KeyedPush, int | None] = GroupCommit(self._record_pushes, max_batch=max_batch)

    async def handle_or_defer(self, event: Event, key: str) -> tuple[str, str]:
        """`handle`, or with PostgreSQL down, queue the event for the worker to replay (`replay_delivery`).

        Raises `StorageError` only when Redis cannot take it either.
        """
        try:
            return await self.handle(event, key)
        except StorageError as exc:
            logger.warning("PostgreSQL unavailable, delivery %s deferred to the worker: %s", key, exc)
            try:
                await enqueue_once(self.deps.require_queue(), REPLAY, f"replay:{key}", event, key)
            except (RedisError, OSError) as queue_exc:
                raise StorageError(f"{exc}; and the queue is unavailable: {queue_exc}") from queue_exc
            return "deferred", "PostgreSQL is unavailable: the worker records this delivery when it is back"

    async def handle(self, event: Event, key: str) -> tuple[str, str]:
        """Record the delivery and enqueue what it asks for; return (outcome, detail)."""
        event = screen(event, self.deps.settings.scope)  # a push out of the indexing scope is ignored
        if isinstance(event, SyncRequested):
            gen = await self._pushes.submit((key, event))
            if gen is None:
                return "duplicate", "delivery seen before"
            return "enqueued", f"sync of project {event.project_id} (generation {gen})"
        db = self.deps.require_db()
        if isinstance(event, Ignored):
            fresh = await db.record_delivery(key, event.event, event.project_id, None, None, "ignored", event.reason)
            return ("ignored" if fresh else "duplicate"), event.reason
        job_id, function, args = _lifecycle_job(event, key)
        fresh = await db.record_delivery(key, event.event, event.project_id, None, None, "enqueued", function)
        if not fresh:
            return "duplicate", "delivery seen before"
        await _nudge(enqueue_once(self.deps.require_queue(), function, job_id, *args))
        return "enqueued", f"{function} of project {event.project_id}"

    async def _record_pushes(self, pushes: Sequence[KeyedPush]) -> list[int | None]:
        # One key twice in a batch (a resend racing its original) is the second one's duplicate.
        first: dict[str, int] = {}
        for i, (key, _) in enumerate(pushes):
            first.setdefault(key, i)
        distinct = [pushes[i] for i in first.values()]
        recorded = dict(zip(first, await self.deps.require_db().record_sync_deliveries(distinct), strict=True))
        jobs = [(p.project_id, gen, p.event) for key, p in distinct if (gen := recorded[key]) is not None]
        await _nudge(push_syncs(self.deps.require_queue(), jobs))
        return [recorded[key] if first[key] == i else None for i, (key, _) in enumerate(pushes)]


def _lifecycle_job(
    event: ProjectDestroyed | ProjectMoved | ProjectUpdated, key: str
) -> tuple[str, str, tuple[object, ...]]:
    if isinstance(event, ProjectDestroyed):
        return f"purge:{event.project_id}:{key}", PURGE, (event.project_id,)
    if isinstance(event, ProjectMoved):
        return f"move:{event.project_id}:{key}", MOVE, (event.project_id, event.new_path)
    return f"refresh:{event.project_id}:{key}", REFRESH, (event.project_id,)


async def _nudge(enqueue: Awaitable[object]) -> None:
    try:
        await enqueue
    except (RedisError, OSError) as exc:
        # The delivery is recorded in PostgreSQL; the reconcile sweep enqueues what is behind.
        logger.warning("queue unavailable, left to the reconcile sweep: %s", exc)
