"""Bounds on the OAuth proxy's public endpoints: who may register clients, how many, how large, how often.

fastmcp's `OAuthProxy` serves RFC 7591 dynamic client registration to anyone and keeps every client
in its `client_storage` for ever, with no limit on the body or its fields. Two pieces bound it
without changing fastmcp:

- `ClientLimits` is the proxy's `client_storage` (a key-value wrapper over the memory store). It
  counts the clients kept, forgets a client that completes no sign-in within `pending_ttl_s` (a
  sign-in is complete when the proxy stores the upstream token bound to that client, at `/token`),
  and remembers which address registered what in that window. Every other collection of the
  proxy's state (transactions, codes, tokens) passes through, in a store capped per collection.
- `OAuthGuard` is ASGI middleware on the proxy's routes: a token bucket per client address (429
  with Retry-After), a body cap (413), and, on `/register`, a cap on every string and list of the
  registration (400 `invalid_client_metadata`) and the per-address and total client limits (429).
  A refused request never reaches the proxy, so nothing of it is stored.

The address is the peer uvicorn reports: behind a proxy, uvicorn must trust its X-Forwarded-For
(`FORWARDED_ALLOW_IPS`), or every caller shares the proxy's address (docs/security.md).
"""

from __future__ import annotations

import json
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, SupportsFloat

from key_value.aio.protocols.key_value import AsyncKeyValue
from key_value.aio.stores.memory import MemoryStore
from key_value.aio.wrappers.base import BaseWrapper
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.auth.ratelimit import TokenBuckets, client_address, too_many
from app.core.access_settings import OAuthSettings
from app.core.bodies import BodyTooLargeError, read_body

CLIENTS = "mcp-oauth-proxy-clients"
"""fastmcp's collection of registered clients (`OAuthProxy._client_store`)."""
UPSTREAM_TOKENS = "mcp-upstream-tokens"
"""fastmcp's collection of GitLab tokens, each bound to the `client_id` that signed in (`UpstreamTokenSet`)."""
REGISTER_PATH = "/register"
STATE_PER_CLIENT = 4
"""Entries each other collection of the proxy's state may hold per client allowed (least recently used go)."""

_address: ContextVar[str] = ContextVar("oauth_client_address", default="unknown")


class ClientLimits(BaseWrapper):
    """The proxy's state store: registered clients counted, unfinished ones forgotten, registrations per address."""

    def __init__(self, settings: OAuthSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.key_value: AsyncKeyValue = MemoryStore(max_entries_per_collection=settings.max_clients * STATE_PER_CLIENT)
        self.settings = settings
        self._clock = clock
        self._pending: OrderedDict[str, float] = OrderedDict()  # client id → when it is forgotten, oldest first
        self._signed_in: set[str] = set()
        self._window: deque[tuple[float, str]] = deque()  # (when it leaves the window, address), oldest first
        self._per_address: Counter[str] = Counter()

    @property
    def clients(self) -> int:
        """Clients kept: registered and signed in, or registered less than `pending_ttl_s` ago."""
        return len(self._pending) + len(self._signed_in)

    async def refusal(self, address: str) -> str | None:
        """Why `address` may not register a client now, or None."""
        await self._expire()
        if self.clients >= self.settings.max_clients:
            return "the service holds as many OAuth clients as it may; try again later"
        if self._per_address[address] >= self.settings.max_registrations_per_address:
            return "too many client registrations from this address; complete a sign-in or try again later"
        return None

    async def get(self, key: str, *, collection: str | None = None) -> dict[str, Any] | None:
        """The stored value; a client whose sign-in window passed is gone."""
        if collection == CLIENTS:
            await self._expire()
        return await self.key_value.get(key, collection=collection)

    async def put(
        self, key: str, value: Mapping[str, Any], *, collection: str | None = None, ttl: SupportsFloat | None = None
    ) -> None:
        """Store; a new client starts its sign-in window, a stored upstream token completes its client's sign-in."""
        if collection == CLIENTS:
            self._registered(key)
        elif collection == UPSTREAM_TOKENS:
            self._signed_in_with(value.get("client_id"))
        await self.key_value.put(key, value, collection=collection, ttl=ttl)

    async def delete(self, key: str, *, collection: str | None = None) -> bool:
        """Delete; a deleted client no longer counts."""
        if collection == CLIENTS:
            self._pending.pop(key, None)
            self._signed_in.discard(key)
        return await self.key_value.delete(key, collection=collection)

    def _registered(self, client_id: str) -> None:
        if client_id in self._pending or client_id in self._signed_in:
            return  # stored again, not registered again
        until = self._clock() + self.settings.pending_ttl_s
        self._pending[client_id] = until
        self._window.append((until, _address.get()))
        self._per_address[_address.get()] += 1

    def _signed_in_with(self, client_id: object) -> None:
        if isinstance(client_id, str) and self._pending.pop(client_id, None) is not None:
            self._signed_in.add(client_id)

    async def _expire(self) -> None:
        now = self._clock()
        while self._pending and next(iter(self._pending.values())) <= now:
            client_id, _ = self._pending.popitem(last=False)
            await self.key_value.delete(key=client_id, collection=CLIENTS)
        while self._window and self._window[0][0] <= now:
            _, address = self._window.popleft()
            self._per_address[address] -= 1
            if self._per_address[address] <= 0:
                del self._per_address[address]


class OAuthGuard:
    """Pure ASGI middleware on the OAuth routes: per-address rate limit, body cap, registration limits."""

    def __init__(self, app: ASGIApp, *, paths: Sequence[str], limits: ClientLimits, buckets: TokenBuckets) -> None:
        self.app = app
        self.paths = frozenset(paths)
        self.limits = limits
        self.buckets = buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request (429, 413, 400) or pass it on with its body replayed."""
        if scope["type"] != "http" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        wait = self.buckets.take("oauth:" + address)
        if wait > 0.0:
            await too_many(wait)(scope, receive, send)
            return
        settings = self.limits.settings
        try:
            body = await read_body(Request(scope, receive), settings.max_body_bytes)
        except BodyTooLargeError as exc:
            await JSONResponse({"error": "invalid_request", "error_description": str(exc)}, 413)(scope, receive, send)
            return
        refused = await self._registration_refused(scope["path"], body, address) if scope["method"] == "POST" else None
        if refused is not None:
            await refused(scope, receive, send)
            return
        token = _address.set(address)
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            _address.reset(token)

    async def _registration_refused(self, path: str, body: bytes, address: str) -> JSONResponse | None:
        if path != REGISTER_PATH:
            return None
        try:
            metadata = json.loads(body)
        except ValueError:
            return None  # the proxy answers a malformed registration itself
        oversized = oversized_field(metadata, self.limits.settings.max_field_chars)
        if oversized is not None:
            return JSONResponse({"error": "invalid_client_metadata", "error_description": oversized}, 400)
        why = await self.limits.refusal(address)
        if why is not None:
            return too_many(self.limits.settings.pending_ttl_s, why)
        return None


def oversized_field(value: Any, max_chars: int, name: str = "registration") -> str | None:
    """Which field of a JSON value is too long (a string over `max_chars`, a list over a 50th of it), or None."""
    if isinstance(value, str) and len(value) > max_chars:
        return f"{name} is longer than {max_chars} characters"
    if isinstance(value, list):
        if len(value) > max_chars // 50:
            return f"{name} has more than {max_chars // 50} items"
        return next((found for item in value if (found := oversized_field(item, max_chars, name))), None)
    if isinstance(value, dict):
        for key, item in value.items():
            found = oversized_field(key, max_chars, "a field name") or oversized_field(item, max_chars, str(key)[:64])
            if found is not None:
                return found
    return None


def oauth_paths(routes: Sequence[BaseRoute], mcp_path: str) -> list[str]:
    """The paths the OAuth proxy serves (registration, authorize, token, consent, callback, discovery)."""
    return [route.path for route in routes if isinstance(route, Route) and route.path != mcp_path]


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body already read, then whatever the client sends next (its disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed
