"""fastmcp's view of our credentials: a `TokenVerifier` over `app.auth.identity`, and the GitLab OAuth proxy.

Verification and permission resolution live in `app.auth.identity`; this module only adapts them:

- `CredentialVerifier` accepts service tokens and GitLab tokens (personal, project, group, OAuth)
  and returns a `CallerToken` that carries the caller's `Access` to the tools;
- without OAuth, `PlainBearerChallenge` answers a refused request with RFC 6750's plain challenge
  (fastmcp's own text tells the client to re-register, which only makes sense with OAuth);
- with `JAVAKB_OAUTH__*` set, fastmcp's `OAuthProxy` serves the MCP authorization flow (protected
  resource metadata, authorization server metadata, client registration, PKCE) in front of GitLab,
  which has no dynamic client registration for arbitrary clients. The proxy hands our verifier the
  GitLab token it obtained, so an OAuth caller has exactly the permissions of its GitLab user. Direct
  bearers (service and GitLab access tokens) keep working next to it (`MultiAuth`). Its public
  endpoints are bounded by `mcp_server.oauth_limits` (client count, sizes, per-address rates).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from fastmcp.server.auth import AccessToken, AuthProvider, MultiAuth, OAuthProxy, TokenVerifier
from fastmcp.server.auth.auth import TokenVerificationError
from fastmcp.server.dependencies import get_access_token
from key_value.aio.protocols.key_value import AsyncKeyValue
from pydantic import ConfigDict
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.auth.access import Access
from app.auth.identity import Credentials, bearer_token
from app.core.errors import ConfigError, GitLabUnavailableError
from app.core.settings import Settings

logger = logging.getLogger(__name__)


class CallerToken(AccessToken):
    """An accepted token together with what its holder may read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    access: Access


class CredentialVerifier(TokenVerifier):
    """Accepts every credential `app.auth.identity.Credentials` knows; GitLab being down is not a wrong token."""

    def __init__(self, credentials: Callable[[], Credentials]) -> None:
        super().__init__()
        self._credentials = credentials

    async def verify_token(self, token: str) -> AccessToken | None:
        """A `CallerToken` for a known token, else None (the server answers 401)."""
        try:
            access = await self._credentials().access(token)
        except GitLabUnavailableError as exc:
            raise TokenVerificationError("GitLab is unavailable; try again") from exc
        if access is None:
            return None
        return CallerToken(token=token, client_id=access.subject, scopes=[], access=access)


def build_auth(settings: Settings, credentials: Callable[[], Credentials], storage: AsyncKeyValue) -> AuthProvider:
    """The verifier alone, or the GitLab OAuth proxy plus the verifier when OAuth is configured.

    `storage` keeps the proxy's state: `mcp_server.oauth_limits.ClientLimits`, which bounds the
    registered clients (served behind its `OAuthGuard`).

    Raises:
        ConfigError: OAuth is configured without a GitLab URL.
    """
    verifier = CredentialVerifier(credentials)
    oauth = settings.oauth
    if not oauth.enabled or oauth.client_id is None or oauth.client_secret is None:
        return verifier
    if not settings.gitlab.url:
        raise ConfigError("JAVAKB_OAUTH__* signs users in with GitLab: set JAVAKB_GITLAB__URL too")
    gitlab = settings.gitlab.url.rstrip("/")
    signing_key = oauth.jwt_signing_key.get_secret_value() if oauth.jwt_signing_key else None
    proxy = OAuthProxy(
        # doc/api/oauth2.md: GitLab's authorization code flow with PKCE.
        upstream_authorization_endpoint=f"{gitlab}/oauth/authorize",
        upstream_token_endpoint=f"{gitlab}/oauth/token",
        upstream_revocation_endpoint=f"{gitlab}/oauth/revoke",
        upstream_client_id=oauth.client_id,
        upstream_client_secret=oauth.client_secret.get_secret_value(),
        token_verifier=verifier,
        base_url=oauth.public_url or "",
        # GitLab does not implement RFC 8707 resource indicators; the scopes are ours to choose.
        forward_resource=False,
        extra_authorize_params={"scope": " ".join(oauth.scopes)},
        client_storage=storage,
        jwt_signing_key=signing_key,
        require_authorization_consent=oauth.require_consent,
    )
    return MultiAuth(server=proxy, verifiers={"tokens": verifier})


def caller_access(*, authenticated: bool) -> Access | None:
    """The access of the request being served: its `CallerToken`'s, or None when it carries none."""
    token = get_access_token()
    if isinstance(token, CallerToken):
        return token.access
    if token is not None and authenticated:
        logger.warning("a token of an unexpected kind reached a tool; refused")
    return None


class UnavailableAs503:
    """ASGI wrapper: a token GitLab could not verify (GitLab down) answers 503 with Retry-After, not 500.

    fastmcp lets `TokenVerificationError` escape its authentication middleware, and the MCP app's own
    `ServerErrorMiddleware` then sends a 500 before re-raising. A 500 whose request ends in that error
    is held back and replaced; any other response goes through untouched.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, turning a GitLab outage during token verification into 503."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def hold_errors(message: Message) -> None:
            if held or (message["type"] == "http.response.start" and message["status"] == 500):
                held.append(message)
                return
            await send(message)

        try:
            await self.app(scope, receive, hold_errors)
        except TokenVerificationError:
            logger.warning("GitLab could not verify a token: answered 503")
            body = {"error": "GitLab is unavailable; try again"}
            await JSONResponse(body, status_code=503, headers={"Retry-After": "5"})(scope, receive, send)
            return
        except Exception:
            for message in held:
                await send(message)
            raise
        for message in held:
            await send(message)


INVALID_TOKEN = {"error": "invalid_token", "error_description": "not a known service or GitLab token"}
MISSING_TOKEN = {"error": "unauthorized", "error_description": "send Authorization: Bearer <token>"}


class PlainBearerChallenge:
    """ASGI wrapper for `/mcp` without OAuth: a 401 becomes a plain bearer challenge (RFC 6750 section 3).

    fastmcp's 401 for a wrong token says "clear authentication tokens ... re-register", and clients
    such as the MCP Inspector then start an OAuth flow the server does not offer. Here a request with a
    bearer token gets `WWW-Authenticate: Bearer error="invalid_token"`, one without gets `Bearer` (no error
    attribute, section 3.1), each with a short JSON body; any other response goes through untouched.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, replacing fastmcp's 401 with ours."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = False

        async def replace_401(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
            if not refused:
                await send(message)

        await self.app(scope, receive, replace_401)
        if refused:
            await self._challenge(scope, receive, send)

    @staticmethod
    async def _challenge(scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if bearer_token(headers.get("authorization")) is None:
            body, challenge = MISSING_TOKEN, "Bearer"
        else:
            body, challenge = INVALID_TOKEN, 'Bearer error="invalid_token"'
        await JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)
