"""`impact`'s answer as data (issue 28), shared by the MCP tool and `GET /api/v1/impact`: the one declaration.

Each method, endpoint and call site carries its `path`: the qualified names from the changed method to it
(an endpoint's route and a call site's name close a remote caller's path).
"""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import TypedDict

from app.search.hits import Citation, Hit
from app.search.impact import Impact


class ImpactPlace(Citation):
    """Where a method of an impact is."""

    symbol_type: str


class ImpactMethod(ImpactPlace):
    """A method that calls the change, `hop` calls away; `path` names each method from the change to it."""

    hop: int
    path: list[str]


class ImpactEndpoint(TypedDict):
    """An HTTP endpoint a changed or calling method serves."""

    http_method: str
    route: str
    handler: str
    handler_place: ImpactPlace
    path: list[str]


class ImpactRemote(ImpactPlace):
    """A call site (in another service, or the same) that reaches an impacted endpoint."""

    endpoint: str
    calls: list[str]
    through: str | None
    path: list[str]


class ImpactItem(TypedDict):
    """`impact`: the changed methods, their callers, the endpoints they serve and the remote call sites of those."""

    seeds: list[ImpactPlace]
    results: list[ImpactMethod]  # the methods calling the change, by hop
    endpoints: list[ImpactEndpoint]
    remote_callers: list[ImpactRemote]
    cut: list[str]
    unmatched: list[str]


def impact_item(found: Impact) -> ImpactItem:
    """The impact as data."""

    def place(hit: Hit) -> ImpactPlace:
        return {**hit.citation(), "symbol_type": hit.symbol_type.value}

    def names(path: Sequence[Hit]) -> list[str]:
        return [h.qualified_name for h in path]

    return {
        "seeds": [place(h) for h in found.seeds],
        "results": [{**place(r.hit), "hop": r.hop, "path": names(r.path)} for r in found.methods],
        "endpoints": [
            {"http_method": e.method, "route": e.route, "handler": e.handler.hit.qualified_name,
             "handler_place": place(e.handler.hit), "path": names(e.handler.path)}
            for e in found.endpoints
        ],
        "remote_callers": [
            {**place(r.site), "endpoint": r.endpoint.label, "calls": [c.describe() for c in r.calls],
             "through": r.through.qualified_name if r.through else None,
             "path": [*names(r.endpoint.handler.path), r.endpoint.label, r.site.qualified_name]}
            for r in found.remote
        ],
        "cut": list(found.cut),
        "unmatched": list(found.unmatched),
    }  # fmt: skip
