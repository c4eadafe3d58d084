"""One POST to an HTTP model server (a `/rerank` or `/chat/completions` endpoint), its failures typed.

The cross-encoder (`app.search.crossencoder`) and the summarizer (`app.store.summaries`) call such a
server over an injected `httpx.AsyncClient`; each names its own error, raised here for a transport
failure or an error status.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import SecretStr


def endpoint_url(base_url: str, path: str) -> httpx.URL:
    """`path` (e.g. `/rerank`) under the server's base URL, whatever its trailing slash."""
    url = httpx.URL(base_url)
    return url.copy_with(path=url.path.rstrip("/") + path)


def bearer(api_key: SecretStr | None) -> dict[str, str]:
    """The `Authorization` header for a key; none without one."""
    key = api_key.get_secret_value() if api_key else ""
    return {"Authorization": f"Bearer {key}"} if key else {}


async def post_json(
    client: httpx.AsyncClient, url: httpx.URL, body: dict[str, Any], headers: dict[str, str], *, timeout_s: float,
    error: type[Exception],
) -> httpx.Response:  # fmt: skip
    """The server's answer to `body`; `error` when the call fails or the answer is an error status."""
    try:
        response = await client.post(url, json=body, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise error(f"{type(exc).__name__}: {exc}") from exc
    if response.is_error:
        raise error(f"HTTP {response.status_code}: {response.text[:200]}")
    return response
