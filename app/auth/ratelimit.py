"""Per-credential rate limits for `/mcp` and `/api/v1/*`: a token bucket per caller, 429 with Retry-After.

The key is the sha256 of the bearer token (a service token, a GitLab token, or the token the OAuth
proxy issued), or the client address for requests without one, so one caller cannot starve the
others and a flood of wrong tokens is slowed like any other. Buckets live in this process: with N
replicas behind a load balancer a caller gets up to N times the rate (docs/security.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.auth.access import token_digest
from app.auth.identity import bearer_token

MAX_BUCKETS = 100_000


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class TokenBuckets:
    """Token buckets keyed by caller: `rate` requests per second on average, `burst` at once."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key: str) -> float:
        """Spend one request of `key`'s bucket: 0.0 if allowed, else the seconds until one is available."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._forget_full(now)
            bucket = self._buckets[key] = _Bucket(tokens=float(self.burst), at=now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        """Drop buckets that have refilled (forgetting them changes nothing), or all if none has."""
        self._buckets = {k: b for k, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate < self.burst}
        if len(self._buckets) >= MAX_BUCKETS:
            self._buckets.clear()


class RateLimitMiddleware:
    """Pure ASGI middleware: requests under `prefixes` spend their caller's bucket or get 429."""

    def __init__(self, app: ASGIApp, *, buckets: TokenBuckets, prefixes: Sequence[str]) -> None:
        self.app = app
        self.buckets = buckets
        self.prefixes = tuple(prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 429 when its caller's bucket is empty."""
        if scope["type"] != "http" or not _under(scope["path"], self.prefixes):
            await self.app(scope, receive, send)
            return
        wait = self.buckets.take(caller_key(scope))
        if wait <= 0.0:
            await self.app(scope, receive, send)
            return
        await too_many(wait)(scope, receive, send)


def too_many(wait: float, error: str = "rate limit exceeded") -> JSONResponse:
    """429 saying when to try again (`Retry-After`, whole seconds, at least 1)."""
    retry_after = max(1, math.ceil(wait))
    body = {"error": error, "retry_after_s": retry_after}
    return JSONResponse(body, status_code=429, headers={"Retry-After": str(retry_after)})


def caller_key(scope: Scope) -> str:
    """`token:<sha256>` for a bearer, else `addr:<client host>`."""
    authorization = None
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            authorization = value.decode("latin-1")
            break
    token = bearer_token(authorization)
    if token is not None:
        return "token:" + token_digest(token)
    return "addr:" + client_address(scope)


def client_address(scope: Scope) -> str:
    """The peer's address as uvicorn reports it (X-Forwarded-For only from `FORWARDED_ALLOW_IPS`)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)
