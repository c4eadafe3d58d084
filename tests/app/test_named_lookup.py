"""A question that names a symbol: the names' matches read by name first, whole payloads only of the one named.

`app.search.pool.named_matches` used to read every symbol of the name's last part whole (`getName` is hundreds of
methods at 109k chunks) to keep the few the question names. The same matches must come out, on both engines,
with the whole payloads read only for them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from app.auth.access import LOCAL
from app.search.pool import MAX_EXACT, named_matches
from app.search.question import QueryTerms
from app.search.ranking import names_symbol
from app.search.scoping import Filters
from app.search.service import SearchService
from app.store import filters
from app.store.engines import Store
from app.store.payloads import PAYLOAD_FIELDS
from app.store.vectors import IndexModel
from tests.support.engines import EMBEDDED_ENGINES, memory_store, write_sources

REPO = "team/app"
OWNER = """\
package demo.o{i};

public class Owner{i} {{
    private String name;

    public String getName() {{
        return name;
    }}
}}
"""
PETS = 12


class Counting:
    """A store that records the ids and fields of every `retrieve`, and the fields of every scroll."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.retrieved: list[tuple[int, tuple[str, ...]]] = []
        self.scrolled: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def retrieve(self, ids: Any, fields: Any) -> Any:
        self.retrieved.append((len(ids), tuple(fields)))
        return await self.inner.retrieve(ids, fields)

    def scroll(self, where: Any, fields: Any, **kwargs: Any) -> Any:
        self.scrolled.append(fields)
        return self.inner.scroll(where, fields, **kwargs)


@pytest_asyncio.fixture(params=EMBEDDED_ENGINES)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    opened = memory_store(request.param)
    await opened.ensure(IndexModel(embedding_model=None, dimension=None))
    await write_sources(
        opened, REPO, [(f"src/main/java/demo/o{i}/Owner{i}.java", OWNER.format(i=i)) for i in range(PETS)]
    )
    try:
        yield opened
    finally:
        await opened.close()


async def every_match_read_whole(store: Store, names: list[str]) -> list[tuple[str, Any]]:
    """What `named_matches` answered before: every symbol of the names' last parts read whole, then the named kept."""
    search = SearchService(store, None)
    hits = await search._reader.lookup(
        LOCAL, Filters(), filters.any_of("name", sorted({n.rsplit(".", 1)[-1] for n in names})), limit=MAX_EXACT
    )
    return [(h.id, h.stored) for h in hits if any(names_symbol(n, h.chunk) for n in names)]


@pytest.mark.parametrize("names", [["Owner7.getName"], ["getName"], ["Owner3.getName", "Owner1"], ["Nobody.getName"]])
async def test_the_named_symbols_are_those_a_whole_read_keeps(store: Store, names: list[str]) -> None:
    counting = Counting(store)
    reader = SearchService(counting, None)._reader

    routes, named = await named_matches(reader, LOCAL, QueryTerms(identifiers=tuple(names), routes=()), Filters())

    assert routes == []
    assert [(h.id, h.stored) for h in named] == await every_match_read_whole(store, names)  # the chunks too
    assert all(fields is not True for fields in counting.scrolled)  # no match was read whole by the scroll
    assert counting.retrieved == ([(len(named), PAYLOAD_FIELDS)] if named else [])
    assert bool(named) == (names != ["Nobody.getName"])


async def test_a_qualified_name_reads_one_whole_payload_among_many_of_its_name(store: Store) -> None:
    counting = Counting(store)
    reader = SearchService(counting, None)._reader

    _, named = await named_matches(reader, LOCAL, QueryTerms(identifiers=("Owner7.getName",), routes=()), Filters())

    assert [h.qualified_name for h in named] == ["demo.o7.Owner7.getName"]
    assert counting.retrieved == [(1, PAYLOAD_FIELDS)]
