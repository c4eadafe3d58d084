"""The search filters a caller names: REST's query parameters and `javakb search`'s options spell them alike.

`NamedFilters` spells them once; the fields `javakb search` sends to serve's socket, and so the `Filters`
they make, are read from it (`filter_fields`), renamed where `Filters` spells them otherwise (`RENAMED`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

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


NAMED: Final = tuple(NamedFilters.__annotations__)
"""The filters a caller names, in `NamedFilters`' order."""

RENAMED: Final = {"path": "path_prefix"}
"""The named filters `Filters` spells otherwise: a path is a path prefix."""


def filters_of(named: NamedFilters) -> Filters:
    """The search filters `named` asks for (its `path` is a path prefix)."""
    from app.search.scoping import Filters

    fields: Mapping[str, Any] = filter_fields(named)  # the names are `Filters`' (a test holds them to it)
    return Filters(**fields)


def filter_fields(named: NamedFilters) -> dict[str, str | None]:
    """`filters_of(named)`'s fields by `Filters`' names, as `javakb search` sends them to serve's socket."""
    return {RENAMED.get(name, name): getattr(named, name) for name in NAMED}
