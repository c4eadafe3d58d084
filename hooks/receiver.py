"""POST /hooks/gitlab: authenticate, parse, record, enqueue, answer. No indexing work happens here.

Order matters: the headers are authenticated first (the token, or the signature headers' format and
time window), so an unauthenticated client never gets its body read; then the body is read with a
size cap, its signature verified, and only then parsed and validated (what PostgreSQL cannot store
is a 400 here, not a "deferred"). It is deduplicated on the signed `webhook-id` when signed, else on
`Idempotency-Key` (fallback `X-Gitlab-Webhook-UUID`), in the same PostgreSQL round trip that records
the delivery and bumps the project's generation (`app.sync.deliveries`, which the worker's replay calls
too). Pushes that arrive together share that round trip
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
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.core import metrics
from app.core.bodies import BodyTooLargeError, read_body
from app.core.context import bound
from app.core.errors import PayloadError, SignatureError, StorageError
from app.core.events import Event
from app.core.settings import GitLabSettings
from app.core.states import ACCEPTED, DeliveryRefusal
from app.sync.deliveries import DeliveryRecorder
from hooks.auth import SignedHeaders, check_token, signed_headers, signing_key, verify
from hooks.events import parse_event

logger = logging.getLogger(__name__)

Clock = Callable[[], float]
MAX_KEY_CHARS = 256


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
        receiver: DeliveryRecorder = request.state.receiver
        settings = receiver.deps.settings.gitlab
        started = time.perf_counter()
        event: Event | None = None
        try:
            event, key = await accept_delivery(request, settings, clock())
            status, detail = await receiver.handle_or_defer(event, key)
        except BodyTooLargeError as exc:
            return refuse(event, DeliveryRefusal.TOO_LARGE, str(exc), 413)
        except SignatureError as exc:
            logger.warning("refused delivery: %s", exc)
            return refuse(event, DeliveryRefusal.UNAUTHORIZED, "unauthorized", 401)
        except PayloadError as exc:
            return refuse(event, DeliveryRefusal.MALFORMED, str(exc), 400)
        except StorageError as exc:
            logger.error("delivery lost: %s", exc)
            return refuse(event, DeliveryRefusal.LOST, "delivery not recorded, try again", 503)
        with bound(delivery_id=key, project_id=getattr(event, "project_id", None)):
            ms = (time.perf_counter() - started) * 1e3
            logger.info("delivery %s %s -> %s (%.1f ms)", key, event.event, status, ms)
        accepted = status in ACCEPTED
        return JSONResponse({"status": status, "detail": detail}, status_code=202 if accepted else 200)

    return gitlab_hook


def refuse(event: Event | None, why: DeliveryRefusal, error: str, status: int) -> JSONResponse:
    """The refusal's answer, counted in `javakb_deliveries` (event `unread` when it was refused before parsing)."""
    metrics.DELIVERIES.labels(event=metrics.event_label(event.event if event else None), outcome=why).inc()
    return JSONResponse({"error": error}, status_code=status)


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
