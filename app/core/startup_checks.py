"""What a service checks of its Settings before it starts.

Weak or placeholder secrets, the webhook signing key's form, the pipeline's C reader in development;
and `secret_values`, what logs redact.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

from app.core.errors import ConfigError

if TYPE_CHECKING:
    from app.core.settings import Settings


logger = logging.getLogger("app.core.settings")  # the name these checks have always logged under

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


def named_secrets(settings: Settings) -> dict[str, SecretStr | None]:
    """The secrets `check_secrets` judges, by their environment variable's name."""
    return {
        "JAVAKB_GITLAB__WEBHOOK_SECRET": settings.gitlab.webhook_secret,
        "JAVAKB_GITLAB__SIGNING_TOKEN": settings.gitlab.signing_token,
        "JAVAKB_GITLAB__TOKEN": settings.gitlab.token,
        "JAVAKB_EMBEDDING__API_KEY": settings.embedding.api_key,
        "JAVAKB_NEXT_EMBEDDING__API_KEY": settings.next_embedding.api_key if settings.next_embedding else None,
        "JAVAKB_QDRANT__API_KEY": settings.qdrant.api_key,
        "JAVAKB_OAUTH__CLIENT_SECRET": settings.oauth.client_secret,
        "JAVAKB_OAUTH__JWT_SIGNING_KEY": settings.oauth.jwt_signing_key,  # signs MCP clients' tokens: never guessable
    }


def secret_values(model: BaseModel) -> list[str]:
    """Every secret's value in a settings model, found by type (`SecretStr`), and a DSN's password: what logs redact."""
    found: list[str] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, SecretStr):
                found.append(item.get_secret_value())
                password = urlsplit(item.get_secret_value()).password if "://" in item.get_secret_value() else None
                found.extend([password] if password else [])
            elif isinstance(item, BaseModel):
                found.extend(secret_values(item))
    return found


def weak_secret(value: str) -> str | None:
    """Why a secret is too weak for production (a placeholder, or under 16 characters), else None."""
    lowered = value.removeprefix(WHSEC_PREFIX).lower()
    if any(lowered.startswith(p) for p in PLACEHOLDERS):
        return "is a placeholder"
    if len(value) < MIN_SECRET_CHARS:
        return f"is shorter than {MIN_SECRET_CHARS} characters"
    return None


def check_secrets(settings: Settings, *, receives_hooks: bool = True) -> None:
    """Refuse to start a service with placeholder or short secrets outside `dev_mode`; warn when hooks are shut.

    Guessable or shared token digests (`app.core.digests`) are warned about, in dev mode too.

    Raises:
        ConfigError: naming every weak secret (never its value) and how to proceed.
    """
    if receives_hooks and settings.gitlab.webhook_secret is None and settings.gitlab.signing_token is None:
        logger.warning(
            "no webhook secret or signing key is set: every GitLab delivery is refused "
            "(set JAVAKB_GITLAB__WEBHOOK_SECRET or JAVAKB_GITLAB__SIGNING_TOKEN)"
        )
    from app.core.digests import digest_warnings  # it reads this module's token models

    for warning in digest_warnings(settings):
        logger.warning("%s (javakb token makes a random one)", warning)
    if settings.dev_mode:
        return
    weak = [
        f"{name} {why}"
        for name, secret in named_secrets(settings).items()
        if secret is not None and (why := weak_secret(secret.get_secret_value()))
    ]
    if weak:
        raise ConfigError("; ".join(weak) + ": use a long random value, or JAVAKB_DEV_MODE=true for development")
