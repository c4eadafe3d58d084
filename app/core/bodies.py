"""Request bodies read with a size cap: the webhook, the admin and index-job APIs, the OAuth endpoints."""

from __future__ import annotations

from starlette.requests import Request

from app.core.errors import PayloadError


class BodyTooLargeError(PayloadError):
    """The delivery is over the configured size limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refusing more than `limit` bytes without buffering them."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(f"body of {declared} bytes is above the limit of {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(f"body is above the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
