"""What a service checks of its Settings before it starts.

Weak or placeholder secrets (the rules: `app.core.secret_rules`), guessable token digests
(`app.core.digests`), and `secret_values`, what logs redact.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

from app.core.digests import digest_warnings
from app.core.errors import ConfigError
from app.core.secret_rules import weak_secret

if TYPE_CHECKING:
    from app.core.settings import Settings


logger = logging.getLogger("app.core.settings")  # the name these checks have always logged under


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
