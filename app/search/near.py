"""Names that exist nowhere, and the indexed names near them (issue 28).

A question that names a symbol the index does not hold (`hugeMethod5`) is answered first with that fact,
then with the names near it (`hugeMethod1`, `hugeMethod2`), never with unrelated hits alone. Near names
are read from the hits a search of the name's words finds: the same access and filters, no scan of
every name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from typing_extensions import TypedDict

from app.auth.access import Access
from app.search.hits import Hit
from app.search.question import query_terms
from app.search.ranking import names_symbol
from app.search.scoping import Filters
from app.search.service import SearchService
from pipeline.model import TYPE_SYMBOLS

NEAR_RATIO = 0.75
"""How alike two simple names must be (difflib's ratio, case folded) to be offered: `hugeMethod1` ~ `hugeMethod5`."""
MAX_NEAR = 5
"""Near names offered per missing name."""
MAX_CHECKED = 3
"""Code names of a question looked up (one exact lookup each)."""
NEAR_SEARCH = 20
"""Hits of a name's own search read for near names (`near_symbols`)."""


class MissingName(TypedDict):
    """A code name a question gives that no indexed symbol has, and the indexed names near it."""

    name: str
    near: list[str]


def near_names(name: str, hits: Iterable[Hit]) -> list[str]:
    """The hits' symbols whose simple name is near `name`'s (`Type.member`, or the type), nearest first."""
    wanted = name.split("(", 1)[0].rsplit(".", 1)[-1].lower()
    scored: dict[str, float] = {}
    for hit in hits:
        simple = hit.chunk.name
        ratio = SequenceMatcher(None, wanted, simple.lower()).ratio()
        if ratio >= NEAR_RATIO and simple.lower() != wanted:
            owner = hit.chunk.enclosing_type
            shown = simple if hit.symbol_type in TYPE_SYMBOLS or not owner else f"{owner.rsplit('.', 1)[-1]}.{simple}"
            scored[shown] = max(scored.get(shown, 0.0), ratio)
    return sorted(scored, key=lambda n: (-scored[n], n))[:MAX_NEAR]


async def near_symbols(search: SearchService, access: Access, name: str, filters: Filters) -> list[str]:
    """The indexed names near one that names nothing: read from a search of its words."""
    return near_names(name, await search.search(access, name, filters, NEAR_SEARCH))


async def missing_names(
    search: SearchService, access: Access, query: str, filters: Filters, hits: Sequence[Hit]
) -> list[MissingName]:
    """The code names of a question that no symbol the caller may read has, each with the near names among `hits`.

    Only names that are code beyond doubt are checked (`hugeMethod5`, `Type.m`, `owner_id`; not `Spring` in
    "uses Spring Boot"), and a name one of `hits` has costs no lookup: the rerank puts exact matches on top.
    """
    missing: list[MissingName] = []
    names = [n for n in query_terms(query).identifiers if _surely_code(n)][:MAX_CHECKED]
    for name in names:
        if any(names_symbol(name, h.chunk) for h in hits):
            continue
        if not await search.symbol(access, name, filters):  # where the search looks (`Filters` is a `Where`)
            missing.append({"name": name, "near": near_names(name, hits)})
    return missing


def _surely_code(name: str) -> bool:
    """A name no prose word looks like: a capital or digit inside it, a dot or an underscore."""
    return "." in name or "_" in name.strip("_") or any(c.isupper() or c.isdigit() for c in name[1:])


def said_missing(missing: Sequence[MissingName]) -> str:
    """The line an answer starts with when the question names symbols that exist nowhere ("" when none)."""
    return "".join(
        f"No symbol is named {m['name']!r}"
        + (f"; near names: {', '.join(m['near'])}" if m["near"] else "; no indexed name is near it")
        + ". The results below match its words only.\n"
        for m in missing
    )
