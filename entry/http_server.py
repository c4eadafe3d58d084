"""uvicorn's HTTP protocol for the web app, with one change: a URL too long to parse gets the query's refusal.

httptools cannot parse a request line over 65,535 bytes (its URL offsets are 16-bit), so uvicorn answers
such a request `400 Invalid HTTP request received.` before the app sees it. A search URL that long
carries a query far over the limits: it is answered `414` with the refusal MCP and the CLI give for it
(`app.search.query_limits`), as JSON like the app's own errors. Any other parse error is uvicorn's.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs, urlsplit

from app.core.access_settings import AccessSettings
from app.search.query_limits import query_refusal

MAX_URL_BYTES = 0xFFFF
"""The longest URL httptools parses."""
QUERY_PARAM = "q"  # `GET /api/v1/search?q=` (`app.rest.schemas.SearchParams`)


def url_refusal(url: bytes, access: AccessSettings) -> str | None:
    """What a URL too long to parse is answered (None when it is not too long)."""
    if len(url) <= MAX_URL_BYTES:
        return None
    for query in parse_qs(urlsplit(url.decode("latin-1")).query).get(QUERY_PARAM, []):
        refusal = query_refusal(query, access.max_query_chars, access.max_query_terms)
        if refusal is not None:
            return refusal
    return f"the request's URL is longer than {MAX_URL_BYTES} bytes"


def http_protocol(access: AccessSettings) -> type[asyncio.Protocol] | str:
    """Uvicorn's `http` option: httptools' protocol answering an over-long URL's query; `auto` without httptools."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is a dependency; h11's own limit then applies
        return "auto"

    class QueryLimitedProtocol(HttpToolsProtocol):
        def send_400_response(self, msg: str) -> None:
            refusal = url_refusal(getattr(self, "url", b""), access)
            if refusal is None:
                super().send_400_response(msg)
                return
            body = json.dumps({"error": refusal}).encode()
            head = f"HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            self.transport.write(head.encode() + b"connection: close\r\n\r\n" + body)
            self.transport.close()

    return QueryLimitedProtocol
