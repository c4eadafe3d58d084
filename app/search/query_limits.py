"""The one rule for an over-long query, and its refusal: what MCP, REST and the CLI all answer.

A query over the characters or words the settings allow (`JAVAKB_ACCESS__MAX_QUERY_CHARS`,
`JAVAKB_ACCESS__MAX_QUERY_TERMS`) would hold the store for seconds; it is refused before any work, with
this message, whichever way it came: an MCP tool, `GET /api/v1/search` (even one whose URL is too long
for the HTTP parser: `entry.http_server`), or `javakb search` (before it reaches `serve`'s socket).
"""

from __future__ import annotations

from app.core.errors import PayloadError


class QueryRefusedError(PayloadError):
    """A query over the limits; its message is the refusal every interface answers."""


def query_refusal(query: str, max_chars: int, max_terms: int) -> str | None:
    """The refusal of `query`, or None when it is within both limits."""
    if len(query) > max_chars:
        reason = f"the query is longer than {max_chars} characters"
    elif len(query.split()) > max_terms:
        reason = f"the query has more than {max_terms} words"
    else:
        return None
    return f"Query refused: {reason}. Ask with fewer words."


def check_query(query: str, max_chars: int, max_terms: int) -> None:
    """Refuse a query over the limits.

    Raises:
        QueryRefusedError: with `query_refusal`'s message.
    """
    refusal = query_refusal(query, max_chars, max_terms)
    if refusal is not None:
        raise QueryRefusedError(refusal)
