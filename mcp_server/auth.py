"""Static bearer tokens for MCP and the REST API, compared in constant time.

A plain `TokenVerifier` serves no OAuth discovery routes, so clients such as Cursor use the static
`Authorization` header from their configuration.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from fastmcp.server.auth import AccessToken, TokenVerifier
from pydantic import SecretStr


def token_matches(token: str, tokens: Sequence[SecretStr]) -> bool:
    """Whether `token` is one of the configured tokens (every candidate is compared, in constant time)."""
    matched = False
    for candidate in tokens:
        matched |= hmac.compare_digest(token.encode(), candidate.get_secret_value().encode())
    return matched and bool(token)


def bearer_matches(authorization: str | None, tokens: Sequence[SecretStr]) -> bool:
    """Whether an `Authorization` header carries `Bearer <one of the tokens>`."""
    if not authorization or not authorization.startswith("Bearer "):
        return False
    return token_matches(authorization.removeprefix("Bearer ").strip(), tokens)


class StaticTokens(TokenVerifier):
    """Accepts the configured bearer tokens."""

    def __init__(self, tokens: Sequence[SecretStr]) -> None:
        super().__init__()
        self._tokens = list(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        """An access token for a configured bearer, else None (the server answers 401)."""
        if not token_matches(token, self._tokens):
            return None
        client = "token-" + hashlib.sha256(token.encode()).hexdigest()[:8]  # never the token itself
        return AccessToken(token=token, client_id=client, scopes=[])
