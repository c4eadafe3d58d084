"""Free-text search and the filters every SearchService answer takes (repo, path prefix, symbol type,
stereotype, annotation, HTTP method), over the `shop` fixture indexed as in `test_search.py`.
"""

from __future__ import annotations

import pytest

from app.auth.access import LOCAL
from app.search.scoping import Filters
from app.search.service import SearchService
from tests.app import test_search
from tests.app.test_search import (
    ACME,
    EXTRA,
    OTHER,
    OWNER_SERVICE_PATH,
    Indexed,
    names,
)
from tests.support.shop import API, API_SRC, JOBS_SRC, short

# The module's fixtures: its own index, as the tests next door read it.
indexed = test_search.indexed
search = test_search.search
pytestmark = pytest.mark.asyncio(loop_scope="module")  # every test shares the module's index and event loop


async def test_search_ranks_the_named_method_first(search: SearchService) -> None:
    hits = await search.search(LOCAL, "OwnerController.initNewPetForm", Filters(repo=ACME))

    assert names(hits)[0] == "OwnerController.initNewPetForm"


async def test_search_answers_a_relation_question_with_the_exact_callers(search: SearchService) -> None:
    hits = await search.search(LOCAL, "who calls NotificationService.notifyOwner", Filters(repo=ACME), limit=5)

    assert sorted(names(hits)[:2]) == ["OwnerEventListener.onOwnerEvent", "ReminderJob.sendVisitReminders"]


async def test_search_respects_the_limit(search: SearchService) -> None:
    assert len(await search.search(LOCAL, "owner", Filters(repo=ACME), limit=3)) == 3


@pytest.mark.parametrize("query", ["", "   "])
async def test_empty_query_returns_nothing(search: SearchService, indexed: Indexed, query: str) -> None:
    calls = indexed.server.calls if indexed.server else 0

    assert await search.search(LOCAL, query) == []
    assert (indexed.server.calls if indexed.server else 0) == calls  # nothing to embed


async def test_lexical_only_search_needs_no_embedder(indexed: Indexed) -> None:
    lexical = SearchService(indexed.store, None)

    hits = await lexical.search(LOCAL, "OwnerService.find", Filters(repo=ACME))

    assert names(hits)[:3] == ["OwnerService.find"] * 3


async def test_only_hybrid_search_embeds_the_query(indexed: Indexed) -> None:
    seen = len(indexed.server.requests) if indexed.server else 0

    hits = await indexed.search.search(LOCAL, "schedule a visit for a pet", Filters(repo=ACME))

    assert hits
    if indexed.server is None:
        assert indexed.search.embedder is None
    else:
        assert [r.inputs for r in indexed.server.requests[seen:]] == [["schedule a visit for a pet"]]


@pytest.mark.parametrize(
    ("repo", "expected"), [(ACME, {ACME}), (OTHER, {OTHER}), ("acme/", {ACME}), ("other/", {OTHER})]
)
async def test_repo_filter_exact_and_group_prefix(search: SearchService, repo: str, expected: set[str]) -> None:
    hits = await search.search(LOCAL, "owner service find", Filters(repo=repo), limit=30)

    assert hits
    assert {h.repo_path for h in hits} == expected


async def test_repo_filter_is_not_a_partial_name(search: SearchService) -> None:
    assert await search.search(LOCAL, "owner service find", Filters(repo="acme")) == []
    assert await search.search(LOCAL, "owner service find", Filters(repo="acme/sh/")) == []


async def test_no_repo_filter_searches_every_repository(search: SearchService) -> None:
    hits = await search.search(LOCAL, "OwnerService.find", limit=40)

    assert {ACME, OTHER} <= {h.repo_path for h in hits}


@pytest.mark.parametrize(
    "prefix", [f"{JOBS_SRC}/messaging", f"{JOBS_SRC}/messaging/", f"/{JOBS_SRC}/messaging/", "shop-jobs"]
)
async def test_path_prefix_filter_is_a_folder(search: SearchService, prefix: str) -> None:
    hits = await search.search(LOCAL, "owner event", Filters(repo=ACME, path_prefix=prefix), limit=30)

    folder = prefix.strip("/") + "/"
    assert hits
    assert all(h.file_path.startswith(folder) for h in hits)


async def test_path_prefix_filter_can_be_one_file(search: SearchService) -> None:
    hits = await search.search(LOCAL, "find owner", Filters(repo=ACME, path_prefix=OWNER_SERVICE_PATH), limit=50)

    assert hits
    assert {h.file_path for h in hits} == {OWNER_SERVICE_PATH}


async def test_path_prefix_filter_does_not_match_part_of_a_folder_name(search: SearchService) -> None:
    assert await search.search(LOCAL, "owner event", Filters(repo=ACME, path_prefix=f"{JOBS_SRC}/mess")) == []


async def test_path_prefix_filter_also_applies_to_relation_answers(search: SearchService) -> None:
    # The exact callers added to a relation question must pass the same folder filter as the fused candidates.
    hits = await search.search(
        LOCAL, "who calls NotificationService.notifyOwner", Filters(repo=ACME, path_prefix=f"{JOBS_SRC}/mess")
    )

    assert hits == []


async def test_relation_answers_respect_the_path_prefix(search: SearchService) -> None:
    filters = Filters(repo=ACME, path_prefix=f"{JOBS_SRC}/scheduling")

    hits = await search.search(LOCAL, "who calls NotificationService.notifyOwner", filters, limit=5)

    assert names(hits)[0] == "ReminderJob.sendVisitReminders"
    assert all(h.file_path.startswith(f"{JOBS_SRC}/scheduling/") for h in hits)


@pytest.mark.parametrize("symbol_type", ["interface", "constructor", "record", "method_part"])
async def test_symbol_type_filter(search: SearchService, symbol_type: str) -> None:
    hits = await search.search(LOCAL, "owner report visit", Filters(repo=ACME, symbol_type=symbol_type), limit=30)

    assert hits
    assert {h.symbol_type for h in hits} == {symbol_type}


@pytest.mark.parametrize("stereotype", ["service", "rest_controller", "repository", "component"])
async def test_stereotype_filter(search: SearchService, stereotype: str) -> None:
    hits = await search.search(LOCAL, "owner visit find", Filters(repo=ACME, stereotype=stereotype), limit=30)

    assert hits
    assert {h.chunk.stereotype for h in hits} == {stereotype}


async def test_annotation_filter(search: SearchService) -> None:
    hits = await search.search(
        LOCAL, "owner", Filters(repo=ACME, annotation="@Transactional(readOnly = true)"), limit=30
    )

    assert hits
    assert all("Transactional" in h.chunk.annotation_names for h in hits)
    assert "OwnerService.find" in names(hits)


async def test_http_method_filter(search: SearchService) -> None:
    hits = await search.search(LOCAL, "owner", Filters(repo=ACME, http_method="delete"), limit=30)

    # The only DELETE routes of the fixture; the dense candidates of hybrid mode may bring either.
    assert set(names(hits)) <= {"OwnerController.deleteOwner", "VisitResource.cancelVisit"}
    assert "OwnerController.deleteOwner" in names(hits)


async def test_http_method_filter_keeps_routes_serving_any_method(search: SearchService) -> None:
    for method in ("GET", "post"):
        hits = await search.search(LOCAL, "health ping", Filters(repo=EXTRA, http_method=method))
        assert names(hits) == ["HealthController.ping"]


async def test_http_method_get_finds_only_get_or_any_routes(search: SearchService) -> None:
    hits = await search.search(LOCAL, "owner pets visits", Filters(http_method="GET"), limit=40)

    assert hits
    assert all({"GET", "ANY"} & set(h.chunk.http_method) for h in hits)
    assert "OwnerController.initNewPetForm" in names(hits)


async def test_filters_combine(search: SearchService) -> None:
    filters = Filters(
        repo="acme/", path_prefix=API_SRC, symbol_type="method", stereotype="rest_controller", http_method="GET"
    )

    hits = await search.search(LOCAL, "owner", filters, limit=30)

    assert hits
    assert {short(h.qualified_name).split(".")[0] for h in hits} <= {"OwnerController", "InvoiceController"}
    assert all(h.qualified_name.startswith(f"{API}.web.") for h in hits)


@pytest.mark.parametrize(
    "question",
    ["how is the discount for customers with lots of animals calculated", "which owner has pets with visits"],
)
async def test_the_top_of_a_search_does_not_depend_on_its_limit(search: SearchService, question: str) -> None:
    # The rules that move a candidate after another look only as far as the pool every search asks for.
    small = [h.chunk.id for h in await search.search(LOCAL, question, limit=5)]
    large = [h.chunk.id for h in await search.search(LOCAL, question, limit=60)]
    assert small == large[:5]
