"""Webhook authentication, before the body is parsed (pure functions).

GitLab sends the hook's secret as-is in `X-Gitlab-Token`. With a signing token configured (feature
flag `webhook_signing_token`, MR gitlab-org/gitlab!230944), it also signs each delivery the Standard
Webhooks way: `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`
keyed with the base64 part of a `whsec_` secret. The signature is preferred when configured.

Everything that can be judged from the headers (the token; the signature headers' presence, format
and time window) is checked by `check_token` / `signed_headers` before the body is read, so an
unauthenticated client cannot make us buffer a body; only the HMAC needs the body.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.core.errors import SignatureError
from app.core.secret_rules import whsec_key

MAX_WEBHOOK_ID_CHARS = 256
_TIMESTAMP = re.compile(r"[0-9]{1,12}")  # seconds since the epoch: 12 digits reach the year 33658


@dataclass(frozen=True, slots=True, kw_only=True)
class SignedHeaders:
    """The Standard Webhooks headers of one delivery, well-formed and inside the time window."""

    webhook_id: str
    timestamp: str
    signatures: tuple[str, ...]


def check_token(expected: str, received: str | None) -> None:
    """Compare `X-Gitlab-Token` in constant time; an empty expected token matches nothing."""
    if not expected or received is None or not hmac.compare_digest(expected.encode(), received.encode()):
        raise SignatureError("missing or wrong X-Gitlab-Token")


def signing_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret (`whsec_<base64>`); `ValueError` when malformed."""
    return whsec_key(secret)


def sign(key: bytes, webhook_id: str, timestamp: str, body: bytes) -> str:
    """The `v1,<base64>` signature of one delivery."""
    mac = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def signed_headers(headers: Mapping[str, str], now: float, tolerance_s: int) -> SignedHeaders:
    """The signature headers, present, well-formed and recent (checked before the body is read)."""
    webhook_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not webhook_id or not timestamp or not signatures:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
    if len(webhook_id) > MAX_WEBHOOK_ID_CHARS or not webhook_id.isprintable():
        raise SignatureError("webhook-id is too long or not printable")
    # int() of hundreds of digits succeeds but `now - sent` then overflows a float: check the shape first.
    if not _TIMESTAMP.fullmatch(timestamp):
        raise SignatureError("webhook-timestamp is not a number of seconds")
    if abs(int(now) - int(timestamp)) > tolerance_s:
        raise SignatureError("webhook-timestamp is outside the tolerance")
    return SignedHeaders(webhook_id=webhook_id, timestamp=timestamp, signatures=tuple(signatures.split()))


def verify(key: bytes, signed: SignedHeaders, body: bytes) -> None:
    """The HMAC over the raw body: one of the (space-separated, for key rotation) signatures must match."""
    if not key:
        raise SignatureError("no signing key")  # an HMAC with an empty key proves nothing
    expected = sign(key, signed.webhook_id, signed.timestamp, body)
    if not any(hmac.compare_digest(expected.encode(), c.encode()) for c in signed.signatures):
        raise SignatureError("webhook-signature does not match")


def check_signature(key: bytes, headers: Mapping[str, str], body: bytes, now: float, tolerance_s: int) -> None:
    """Verify `webhook-signature` over the raw body, and that `webhook-timestamp` is recent."""
    verify(key, signed_headers(headers, now, tolerance_s), body)
