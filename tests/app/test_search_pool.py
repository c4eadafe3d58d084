"""Exact matches join the candidate pool: a handler or symbol lexical search misses, in bounded store calls.

The corpus is written here: a controller whose handler shares no word with the question, among sixty
decoys that match every word of it, so the handler is outside Qdrant's candidates by construction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL, Access
from app.search.scoping import Filters
from app.search.service import SearchService
from app.store.vectors import IndexModel, VectorStore
from tests.support.engines import write_sources

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO = "team/app"
OTHER = "team/other"
CONTROLLER = """\
package demo.web;

import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/o")
public class ShortLinks {
    @GetMapping("/{code}")
    public String expand(@PathVariable String code) {
        return code;
    }

    @DeleteMapping("/{code}")
    public void forget(@PathVariable String code) {
    }

    @GetMapping("/")
    public String home() {
        return "home";
    }
}
"""
DECOY = """\
package demo.decoy{i};

public class WhichHandler{i} {{
    /** Which handler serves this: the handler that serves requests. */
    public String servesHandler{i}(String which) {{
        return which + "serves handler" + which;
    }}
}}
"""
CALLER = """\
package demo.other;

public class Archiver {
    private final demo.web.ShortLinks links;

    Archiver(demo.web.ShortLinks links) { this.links = links; }

    public void archive(String code) {
        links.forget(code);
    }
}
"""


class CountingStore:
    """A store that counts the calls search makes."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if name in {"query", "scroll", "retrieve", "count", "counts_by"}:
            self.calls.append(name)
        return attribute


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def store() -> AsyncIterator[VectorStore]:
    vectors = VectorStore(AsyncQdrantClient(location=":memory:"), "java_code")
    await vectors.ensure(IndexModel(embedding_model=None, dimension=None))
    sources = [("src/main/java/demo/web/ShortLinks.java", CONTROLLER)]
    sources += [(f"src/main/java/demo/decoy{i}/WhichHandler{i}.java", DECOY.format(i=i)) for i in range(60)]
    await write_sources(vectors, REPO, sources)
    await write_sources(vectors, OTHER, [("src/main/java/demo/other/Archiver.java", CALLER)])
    try:
        yield vectors
    finally:
        await vectors.close()


@pytest.fixture
def search(store: VectorStore) -> SearchService:
    return SearchService(store, None)


def short(name: str) -> str:
    return ".".join(name.split(".")[-2:])


async def test_the_decoys_hide_the_handler_from_lexical_search(store: VectorStore) -> None:
    plain = SearchService(store, None)

    hits = await plain.search(LOCAL, "which handler serves this request", limit=40)

    assert "ShortLinks.expand" not in [short(h.qualified_name) for h in hits]


@pytest.mark.parametrize(
    ("question", "handler"),
    [
        ("which handler serves /o/7?", "ShortLinks.expand"),
        ("which handler serves GET /o/ab12", "ShortLinks.expand"),
        ("which handler serves DELETE /o/ab12", "ShortLinks.forget"),
        ("which handler serves GET /o/", "ShortLinks.home"),
    ],
)
async def test_a_handler_of_the_route_comes_first_though_lexical_search_misses_it(
    search: SearchService, question: str, handler: str
) -> None:
    hits = await search.search(LOCAL, question, limit=1)

    assert [short(h.qualified_name) for h in hits] == [handler]


async def test_a_route_without_a_verb_finds_the_handlers_of_every_verb(search: SearchService) -> None:
    hits = await search.search(LOCAL, "which handler serves http://short.example/o/xyz?utm=1", limit=2)

    assert {short(h.qualified_name) for h in hits} == {"ShortLinks.expand", "ShortLinks.forget"}


async def test_a_named_symbol_comes_first_though_lexical_search_ranks_it_low(search: SearchService) -> None:
    hits = await search.search(LOCAL, "which handler serves `forget`", limit=3)

    assert short(hits[0].qualified_name) == "ShortLinks.forget"


async def test_exact_matches_obey_the_filters_and_the_callers_access(search: SearchService) -> None:
    in_decoys = await search.search(
        LOCAL, "which handler serves /o/7", Filters(path_prefix="src/main/java/demo/decoy1")
    )
    assert "ShortLinks.expand" not in [short(h.qualified_name) for h in in_decoys]

    others_only = Access(subject="user:1", repo_prefixes=(OTHER,))
    hits = await search.search(others_only, "which handler serves /o/7")
    assert {h.repo_path for h in hits} <= {OTHER}


async def test_relation_answers_join_the_pool(search: SearchService) -> None:
    hits = await search.search(LOCAL, "who calls ShortLinks.forget", limit=3)

    assert short(hits[0].qualified_name) == "Archiver.archive"


async def test_exact_matches_take_one_scroll_however_many_names_and_routes(store: VectorStore) -> None:
    counting = CountingStore(store)
    search = SearchService(counting, None)

    await search.search(LOCAL, "owner")  # the scope's library probe (a count), once per repos_ttl_s
    counting.calls.clear()
    await search.search(LOCAL, "ShortLinks.expand ShortLinks.forget WhichHandler1 WhichHandler2 GET /o/1 and /o/")

    assert sorted(counting.calls) == ["query", "scroll"]  # run side by side: either may start first
