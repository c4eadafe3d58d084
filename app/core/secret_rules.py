"""What makes a secret well-formed or too weak: pure rules, read by the settings, the start-up checks and doctor."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import SecretStr

WHSEC_PREFIX = "whsec_"
MIN_SECRET_CHARS = 16
PLACEHOLDERS = frozenset(
    {"changeme", "change-me", "change_me", "secret", "password", "token", "example", "placeholder", "xxx", "todo"}
)
"""Values seen in sample configurations; compared lower-cased, also as a prefix (`changeme123`)."""


def whsec_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret: `whsec_` + base64 of at least one byte.

    Raises:
        ValueError: the secret has no `whsec_` prefix, is not base64 after it, or decodes to nothing.
    """
    if not secret.startswith(WHSEC_PREFIX):
        raise ValueError("the signing token must look like whsec_<base64>")
    try:
        key = base64.b64decode(secret.removeprefix(WHSEC_PREFIX), validate=True)
    except binascii.Error as exc:
        raise ValueError("the signing token is not valid base64 after whsec_") from exc
    if not key:
        raise ValueError("the signing token's key is empty")
    return key


def weak_secret(value: str) -> str | None:
    """Why a secret is too weak for production (a placeholder, or under 16 characters), else None."""
    lowered = value.removeprefix(WHSEC_PREFIX).lower()
    if any(lowered.startswith(p) for p in PLACEHOLDERS):
        return "is a placeholder"
    if len(value) < MIN_SECRET_CHARS:
        return f"is shorter than {MIN_SECRET_CHARS} characters"
    return None


def empty_is_unset(value: Any) -> Any:
    """An empty or blank secret is no secret: `JAVAKB_GITLAB__WEBHOOK_SECRET=` must not mean "the empty key"."""
    raw = value.get_secret_value() if isinstance(value, SecretStr) else value
    if isinstance(raw, str) and not raw.strip():
        return None
    return value
