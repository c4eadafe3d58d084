"""Webhook authentication, before the body is parsed (pure functions).

GitLab sends the hook's secret as-is in `X-Gitlab-Token`. With a signing token configured (feature
flag `webhook_signing_token`, MR gitlab-org/gitlab!230944), it also signs each delivery the Standard
Webhooks way: `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`
keyed with the base64 part of a `whsec_` secret. The signature is preferred when configured.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping

from app.errors import SignatureError

_PREFIX = "whsec_"


def check_token(expected: str, received: str | None) -> None:
    """Compare `X-Gitlab-Token` in constant time."""
    if received is None or not hmac.compare_digest(expected.encode(), received.encode()):
        raise SignatureError("missing or wrong X-Gitlab-Token")


def signing_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret (`whsec_<base64>`); a bare secret is used as bytes."""
    if secret.startswith(_PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(_PREFIX), validate=True)
        except binascii.Error as exc:
            raise ValueError("the signing token is not valid base64 after whsec_") from exc
    return secret.encode()


def sign(key: bytes, webhook_id: str, timestamp: str, body: bytes) -> str:
    """The `v1,<base64>` signature of one delivery."""
    mac = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def check_signature(key: bytes, headers: Mapping[str, str], body: bytes, now: float, tolerance_s: int) -> None:
    """Verify `webhook-signature` over the raw body, and that `webhook-timestamp` is recent."""
    webhook_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not webhook_id or not timestamp or not signatures:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent = int(timestamp)
    except ValueError as exc:
        raise SignatureError("webhook-timestamp is not a number") from exc
    if abs(now - sent) > tolerance_s:
        raise SignatureError("webhook-timestamp is outside the tolerance")
    expected = sign(key, webhook_id, timestamp, body)
    # The header may carry several space-separated signatures (key rotation); one match suffices.
    if not any(hmac.compare_digest(expected, candidate) for candidate in signatures.split()):
        raise SignatureError("webhook-signature does not match")
