"""The search filters a caller names: REST's query parameters and `javakb search`'s options spell them alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypedDict

if TYPE_CHECKING:  # imported when built: `javakb search` sends the fields through serve's socket without it
    from app.search.scoping import Filters


class NamedFilters(Protocol):
    """What `GET /api/v1/search` (`app.rest.schemas.SearchParams`) and `javakb search` (its options) name."""

    repo: str | None
    path: str | None
    symbol_type: str | None
    stereotype: str | None
    annotation: str | None
    http_method: str | None
    language: str | None


class FilterFields(TypedDict):
    """The fields of `Filters` a caller names (mypy holds them to `Filters`' own, in `filters_of`)."""

    repo: str | None
    path_prefix: str | None
    symbol_type: str | None
    stereotype: str | None
    annotation: str | None
    http_method: str | None
    language: str | None


def filters_of(named: NamedFilters) -> Filters:
    """The search filters `named` asks for (its `path` is a path prefix)."""
    from app.search.scoping import Filters

    return Filters(**filter_fields(named))


def filter_fields(named: NamedFilters) -> FilterFields:
    """`filters_of(named)`'s fields by name, as `javakb search` sends them to serve's socket."""
    return {
        "repo": named.repo,
        "path_prefix": named.path,
        "symbol_type": named.symbol_type,
        "stereotype": named.stereotype,
        "annotation": named.annotation,
        "http_method": named.http_method,
        "language": named.language,
    }
