"""The search filters a caller names: REST's query parameters and `javakb search`'s options spell them alike."""

from __future__ import annotations

from typing import Protocol

from app.search.scoping import Filters


class NamedFilters(Protocol):
    """What `GET /api/v1/search` (`app.rest.schemas.SearchParams`) and `javakb search` (its options) name."""

    repo: str | None
    path: str | None
    symbol_type: str | None
    stereotype: str | None
    annotation: str | None
    http_method: str | None


def filters_of(named: NamedFilters) -> Filters:
    """The search filters `named` asks for (its `path` is a path prefix)."""
    return Filters(
        repo=named.repo,
        path_prefix=named.path,
        symbol_type=named.symbol_type,
        stereotype=named.stereotype,
        annotation=named.annotation,
        http_method=named.http_method,
    )
