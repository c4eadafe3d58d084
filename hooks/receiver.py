"""POST /hooks/gitlab: authenticate, parse, record, enqueue, answer. No indexing work happens here.

Order matters: the headers are authenticated first (the token, or the signature headers' format and
time window), so an unauthenticated client never gets its body read; then the body is read with a
size cap, its signature verified, and only then parsed and validated (what PostgreSQL cannot store
is a 400 here, not a "deferred"). It is deduplicated on the signed `webhook-id` when signed, else on
`Idempotency-Key` (fallback `X-Gitlab-Webhook-UUID`), in the same PostgreSQL round trip that records
the delivery and bumps the project's generation. Pushes that arrive together share that round trip
and one Redis round trip (`GroupCommit`): each is answered only once it is recorded. The queue is
only a nudge: if Redis is down the delivery is still recorded, and the worker's reconcile sweep
picks the project up. GitLab never resends a failed delivery on its own, so if PostgreSQL is down
the event is queued whole on Redis (`replay:<key>`) and the worker records it once PostgreSQL is
back (answer 202 "deferred"); only with both down is the answer 503.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from redis.exceptions import RedisError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.db import KeyedPush
from app.deps import Deps
from app.errors import PayloadError, SignatureError, StorageError, UnstorableError
from app.queue import MOVE, PURGE, REFRESH, REPLAY, enqueue_once, push_syncs
from app.scope import screen
from app.settings import GitLabSettings
from hooks.auth import SignedHeaders, check_token, signed_headers, signing_key, verify
from hooks.events import Event, Ignored, ProjectDestroyed, ProjectMoved, ProjectUpdated, SyncRequested, parse_event
from hooks.group_commit import GroupCommit

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
MAX_KEY_CHARS = 256
PushResult = int | None | PayloadError
"""A push's generation, None for a duplicate, or why PostgreSQL could not store it."""


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


def check_headers(settings: GitLabSettings, headers: Headers, now: float) -> SignedHeaders | None:
    """What can be authenticated before the body is read: the token, or the signature headers.

    Returns the signature headers still to verify over the body, or None in token mode.
    """
    if settings.signing_token is not None:
        return signed_headers(headers, now, settings.signature_tolerance_s)
    if settings.webhook_secret is not None:
        check_token(settings.webhook_secret.get_secret_value(), headers.get("x-gitlab-token"))
        return None
    raise SignatureError("no webhook secret is configured: every delivery is refused")


def verify_body(settings: GitLabSettings, signed: SignedHeaders | None, body: bytes) -> None:
    """The signature over the raw body, when the delivery is signed."""
    if signed is not None and settings.signing_token is not None:
        verify(signing_key(settings.signing_token.get_secret_value()), signed, body)


def delivery_key(headers: Headers, body: bytes, signed: SignedHeaders | None = None) -> str:
    """The deduplication key: the signed `webhook-id` when the signature was verified.

    Else the first of `Idempotency-Key` (same on resends), `X-Gitlab-Webhook-UUID`, `webhook-id`,
    or the body's digest. A verified `webhook-id` wins over the unsigned headers: otherwise a
    captured signed delivery could be replayed inside the tolerance window under fresh keys.
    """
    if signed is not None:
        return signed.webhook_id
    for header in ("idempotency-key", "x-gitlab-webhook-uuid", "webhook-id"):
        value = headers.get(header)
        if value:
            if len(value) > MAX_KEY_CHARS or not value.isprintable():
                raise PayloadError(f"{header} must be at most {MAX_KEY_CHARS} printable characters")
            return value
    return "sha256:" + hashlib.sha256(body).hexdigest()


def make_endpoint(clock: Clock = time.time) -> Callable[[Request], object]:
    """The Starlette endpoint (the clock is injected for signature timestamps)."""

    async def gitlab_hook(request: Request) -> JSONResponse:
        receiver: Receiver = request.state.receiver
        settings = receiver.deps.settings.gitlab
        started = time.perf_counter()
        try:
            event, key = await accept_delivery(request, settings, clock())
            status, detail = await receiver.handle_or_defer(event, key)
        except BodyTooLargeError as exc:
            return JSONResponse({"error": str(exc)}, status_code=413)
        except SignatureError as exc:
            logger.warning("refused delivery: %s", exc)
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        except PayloadError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except StorageError as exc:
            logger.error("delivery lost: %s", exc)
            return JSONResponse({"error": "delivery not recorded, try again"}, status_code=503)
        logger.info("delivery %s %s -> %s (%.1f ms)", key, event.event, status, (time.perf_counter() - started) * 1e3)
        accepted = status in ("enqueued", "deferred")
        return JSONResponse({"status": status, "detail": detail}, status_code=202 if accepted else 200)

    return gitlab_hook


async def accept_delivery(request: Request, settings: GitLabSettings, now: float) -> tuple[Event, str]:
    """Authenticate (headers first, then the body's signature), parse, and key one delivery."""
    signed = check_headers(settings, request.headers, now)
    body = await read_body(request, settings.max_body_bytes)
    verify_body(settings, signed, body)
    event = parse_event(_decode(body))
    return event, delivery_key(request.headers, body, signed)


def _decode(body: bytes) -> object:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PayloadError(f"malformed JSON: {exc}") from exc
    except RecursionError as exc:  # nesting deeper than the parser's recursion limit
        raise PayloadError("malformed JSON: nested too deeply") from exc


class Receiver:
    """Records deliveries and enqueues their jobs; concurrent pushes share their round trips."""

    def __init__(self, deps: Deps, *, max_batch: int = 256) -> None:
        self.deps = deps
        self._pushes: GroupCommit[KeyedPush, PushResult] = GroupCommit(self._record_pushes, max_batch=max_batch)

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
            if isinstance(gen, PayloadError):
                raise gen
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

    async def _record_pushes(self, pushes: Sequence[KeyedPush]) -> list[PushResult]:
        # One key twice in a batch (a resend racing its original) is the second one's duplicate.
        first: dict[str, int] = {}
        for i, (key, _) in enumerate(pushes):
            first.setdefault(key, i)
        distinct = [pushes[i] for i in first.values()]
        recorded = dict(zip(first, await self._record_isolated(distinct), strict=True))
        jobs = [(p.project_id, gen, p.event) for key, p in distinct if isinstance(gen := recorded[key], int)]
        await _nudge(push_syncs(self.deps.require_queue(), jobs))
        return [recorded[key] if first[key] == i else None for i, (key, _) in enumerate(pushes)]

    async def _record_isolated(self, pushes: Sequence[KeyedPush]) -> list[PushResult]:
        """Record a batch; when PostgreSQL cannot store one of its values, record each push on its own.

        The edge validates what it can, so this is the last line: one bad row must not turn its
        neighbours' answers into errors (nor into "deferred", as a StorageError would).
        """
        db = self.deps.require_db()
        try:
            return list(await db.record_sync_deliveries(pushes))
        except UnstorableError as exc:
            if len(pushes) == 1:
                return [exc]
        return [result for push in pushes for result in await self._record_isolated([push])]


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
