"""What SearchService asks of the store: members written out of file order are scanned and sorted, a set
page lists each id once, and the named symbols are looked up while the question is embedded.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

import pytest

from app.auth.access import LOCAL
from app.search.scoping import EVERYWHERE, Filters
from app.search.service import SearchService
from app.store.engines import Store
from app.store.payloads import FILE_ORDER
from app.store.vectors import IndexModel, chunk_point
from pipeline.model import Chunk
from testkit.standins import Around, Method, around
from tests.app import test_search
from tests.app.test_search import (
    GITLAB,
    INDEXED_AT,
    Indexed,
    by_file_order,
    showing,
)
from tests.support.engines import EMBEDDED_ENGINES, memory_store
from tests.support.java import chunk_java

# The module's fixtures: its own index, as the tests next door read it.
indexed = test_search.indexed
search = test_search.search
pytestmark = pytest.mark.asyncio(loop_scope="module")  # every test shares the module's index and event loop


JOBS_SOURCE: Final = """\
package demo;
class Jobs {
    @Transactional void first() {}
    @Transactional void second() {}
    @Transactional void third() {}
}
"""


@pytest.mark.parametrize("engine", EMBEDDED_ENGINES)
async def test_a_store_with_members_written_before_file_order_is_scanned_and_sorted(engine: str) -> None:
    store = memory_store(engine)
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        found = [c for c in chunk_java(JOBS_SOURCE, "src/main/java/demo/Jobs.java").chunks if c.annotation_names]
        points = [chunk_point(c, None, INDEXED_AT.isoformat()) for c in found]
        del (points[1].payload or {})[FILE_ORDER]  # written before the key existed
        await store.upsert(points)
        search = SearchService(store, None)

        scanned = await search.annotation_window(LOCAL, "Transactional", EVERYWHERE, 0, showing(5), scan=2)
        whole = await search.annotation_window(LOCAL, "Transactional", EVERYWHERE, 1, showing(5))
    finally:
        await store.close()
    assert (scanned.total, scanned.scanned, [m.id for m in scanned.members]) == (2, True, sorted_ids(found[:2]))
    assert (whole.total, whole.scanned, [m.id for m in whole.members]) == (3, False, [c.id for c in found[1:]])


def sorted_ids(chunks: Sequence[Chunk]) -> list[str]:
    return [c.id for c in sorted(chunks, key=lambda c: c.line_start)]


def store_calls(store: Store, names: Sequence[str]) -> tuple[Store, Counter[str]]:
    """`store` counting the calls of these methods."""
    calls: Counter[str] = Counter()

    def counting(name: str) -> Around:
        def wrap(original: Method) -> Method:
            async def call(*args: Any, **kwargs: Any) -> Any:
                calls[name] += 1
                return await original(*args, **kwargs)

            return call

        return wrap

    return around(store, **{name: counting(name) for name in names}), calls


@pytest.mark.parametrize("listing", [1, 2, 3, 128])
async def test_a_set_page_lists_ids_once_and_counts_only_a_set_longer_than_its_listing(
    search: SearchService, indexed: Indexed, listing: int
) -> None:
    expected = by_file_order(c for c in indexed.chunks.values() if "Transactional" in c.annotation_names)
    assert 3 < len(expected) < 128
    store, calls = store_calls(search.store, ["ordered_ids", "count"])
    counted = SearchService(store, None)
    filters = Filters(annotation="Transactional")
    await counted.window(LOCAL, filters, None, 0, showing(2))  # the store facts it checks first, then kept

    pages: list[list[str]] = []
    for offset in (0, 2, len(expected), len(expected) + 5):
        calls.clear()
        window = await counted.window(LOCAL, filters, None, offset, showing(2), listing=listing)
        assert (window.total, window.scanned) == (len(expected), False)
        pages.append([m.id for m in window.members])
        if listing > len(expected):  # the first listing holds the whole set: it tells the total, no count
            assert (calls["ordered_ids"], calls["count"]) == (1, 0)
    assert pages == [expected[:2], expected[2:4], [], []]


async def test_the_named_symbols_are_looked_up_while_the_question_is_embedded(indexed: Indexed) -> None:
    if indexed.mode != "hybrid":
        pytest.skip("only a hybrid search embeds the question")
    looked_up = asyncio.Event()
    real = indexed.search

    def scroll(original: Method) -> Method:
        def noting(*args: Any, **kwargs: Any) -> Any:
            looked_up.set()
            return original(*args, **kwargs)

        return noting

    def embed_query(original: Method) -> Method:
        async def waiting(text: str) -> list[float]:
            await asyncio.wait_for(looked_up.wait(), 5)  # times out if the lookup waits for the embedding
            result: list[float] = await original(text)
            return result

        return waiting

    assert real.embedder is not None
    overlapping = SearchService(
        around(real.store, scroll=scroll), around(real.embedder, embed_query=embed_query), GITLAB + "/"
    )
    question = "OwnerService.find"

    hits = await overlapping.search(LOCAL, question)

    assert [h.id for h in hits] == [h.id for h in await real.search(LOCAL, question)]
