"""Every MCP tool over the in-memory transport, on the `shop` fixture indexed lexical-only.

The fixture is indexed once per module with `index_directory` (what `javakb index` runs) into an
embedded in-memory Qdrant; each test opens `fastmcp.Client(create_server(...))` on it. Expected
answers come from `tests/fixtures/java/shop/FIXTURE.md`. Chunk spans include the Javadoc
(docs/decisions.md), so cited lines start there, not at the declaration FIXTURE.md lists.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, Final

import pytest
import pytest_asyncio
from fastmcp import Client
from fastmcp.client.client import CallToolResult
from fastmcp.exceptions import ToolError
from mcp.types import TextContent

from app.auth.access import LOCAL
from app.core.settings import GitLabSettings, QdrantSettings, Settings
from app.runtime import Deps
from app.sync.local_index import index_directory
from app.sync.localfs import chunk_local_files
from entry.deps import open_deps
from mcp_server.server import create_server
from pipeline.model import TYPE_SYMBOLS, SourceContext
from tests.support.contract import CITATION_FIELDS, MUTATING_TOOLS, SEARCH_TOOL_NAMES, TOOL_NAMES
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import API_SRC, CORE_SRC, JOBS_SRC, chunk_shop, short

pytestmark = pytest.mark.asyncio(loop_scope="module")  # every test shares the module's index and event loop

REPO: Final = "acme/shop"
OWNER_SERVICE: Final = f"{CORE_SRC}/core/service/OwnerService.java"
TOOLS: Final = SEARCH_TOOL_NAMES  # the tools over the index; the status tools: test_status_tools.py
CITATION: Final = CITATION_FIELDS
# One call per tool that needs an argument, each with a real answer on the fixture.
CALLS: Final[dict[str, dict[str, Any]]] = {
    "semantic_search": {"query": "who reminds owners about tomorrow's visits"},
    "get_symbol": {"name": "OwnerService.find"},
    "find_by_annotation": {"annotation": "Scheduled"},
    "get_callers": {"name": "NotificationService.notifyOwner"},
    "get_callees": {"name": "OwnerController.findOwner"},
    "find_endpoint": {"path": "/api/owners/42/pets/new", "http_method": "GET"},
    "find_endpoint_callers": {"path": "/billing/invoices/7", "http_method": "GET"},
    "find_injections": {"type": "OwnerRepository"},
    "find_implementations": {"type": "PricingPolicy"},
    "get_file_outline": {"repo": REPO, "path": OWNER_SERVICE},
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deps() -> AsyncIterator[Deps]:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as opened:
        await index_directory(opened, SHOP_DIR, REPO)
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def client(deps: Deps) -> AsyncIterator[Client[Any]]:
    async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as c:
        yield c


async def call(client: Client[Any], tool: str, **arguments: Any) -> CallToolResult:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    return result


def text(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def data(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    return result.structured_content


def names(items: list[dict[str, Any]]) -> list[str]:
    return [short(str(item["qualified_name"])) for item in items]


def owner_type(item: dict[str, Any]) -> str:
    """The type a result belongs to: itself for a type, else the enclosing type of a member."""
    name = short(item["qualified_name"])
    return name if item["symbol_type"] in TYPE_SYMBOLS else name.rsplit(".", 1)[0]


def cited_lines(citation: dict[str, Any]) -> list[str]:
    lines = (SHOP_DIR / str(citation["file_path"])).read_text(encoding="utf-8").splitlines()
    start, end = int(citation["line_start"]), int(citation["line_end"])
    assert 1 <= start <= end <= len(lines), citation
    return lines[start - 1 : end]


EXCERPT_MARK = re.compile(r"\n    // \.\.\. (\d+) more lines$")


def assert_cites_its_source(citation: dict[str, Any]) -> None:
    """The cited span holds what the result shows: its code (or excerpt), else at least its name."""
    lines = cited_lines(citation)
    code: str | None = citation.get("code")
    if code is None:  # outlines and callees cite without code
        member = citation["qualified_name"].rsplit(".", 1)[-1]
        assert any(member in line for line in lines), citation
        return
    cut = EXCERPT_MARK.search(code)
    shown = code[: cut.start()].splitlines() if cut else code.splitlines()
    if citation["symbol_type"] in TYPE_SYMBOLS:  # a type chunk is a skeleton: member bodies are elided
        assert shown[0] == lines[0], citation
        return
    assert shown == lines[: len(shown)], citation
    # The excerpt's count of left-out lines is taken the way `str.splitlines` counts (no trailing blank line).
    assert len(shown) + (int(cut.group(1)) if cut else 0) == len("\n".join(lines).splitlines()), citation


def citations(tool: str, structured: dict[str, Any]) -> list[dict[str, Any]]:
    """Every citation a tool's structured answer carries, wherever the tool puts them."""
    if tool == "get_callees":
        return [target for item in structured["results"] for target in item["targets"]]
    items: list[dict[str, Any]] = structured["results"]
    return items


def assert_tool_error(result: CallToolResult, message: str) -> None:
    """A tool error the model can read: the message is there, a traceback is not."""
    assert result.is_error
    assert message in text(result)
    assert "Traceback" not in text(result)
    assert 'File "' not in text(result)


# --- the tool list -------------------------------------------------------------------------------------------------


async def test_the_tool_list_is_stable(client: Client[Any]) -> None:
    assert [tool.name for tool in await client.list_tools()] == list(TOOL_NAMES)


async def test_every_tool_but_refresh_is_read_only_and_described_with_an_example_of_itself(client: Client[Any]) -> None:
    for tool in await client.list_tools():
        summary, _, example = (tool.description or "").partition("Example:")
        assert summary.strip(), tool.name
        assert f"{tool.name}(" in example, tool.name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name not in MUTATING_TOOLS), tool.name
        if tool.name in MUTATING_TOOLS:
            assert tool.annotations.idempotent_hint is True and tool.annotations.destructive_hint is False


# --- citations -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", list(CALLS))
async def test_every_result_cites_the_lines_it_came_from(client: Client[Any], tool: str) -> None:
    found = citations(tool, data(await call(client, tool, **CALLS[tool])))
    assert found
    for citation in found:
        assert citation.keys() >= CITATION
        assert citation["repo_path"] == REPO
        assert citation["signature"]
        datetime.fromisoformat(citation["indexed_at"])
        # A local checkout has no commit, so there is nothing to link to (the permalink test covers that).
        assert (citation["commit_sha"], citation["permalink"]) == (None, None)
        assert_cites_its_source(citation)


async def test_a_synced_commit_gives_a_permalink_in_text_and_data() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    settings = Settings(qdrant=QdrantSettings(path=":memory:"), gitlab=GitLabSettings(url="https://gitlab.example.com"))
    source = SHOP_DIR / OWNER_SERVICE
    async with open_deps(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        [result] = chunk_local_files(
            [(OWNER_SERVICE, source)], SourceContext(repo_path=REPO, commit_sha=sha), settings.chunking.to_config()
        )
        await deps.indexer.write(REPO, [result])
        async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as client:
            answer = await call(client, "get_symbol", name="OwnerService.find(Long)")
    [item] = data(answer)["results"]
    link = f"https://gitlab.example.com/{REPO}/-/blob/{sha}/{OWNER_SERVICE}#L{item['line_start']}-{item['line_end']}"
    assert (item["commit_sha"], item["permalink"]) == (sha, link)
    assert f"@ {sha[:12]}" in text(answer)
    assert link in text(answer)


# --- one tool at a time --------------------------------------------------------------------------------------------


async def test_get_symbol_returns_every_overload_with_its_whole_code(client: Client[Any]) -> None:
    answer = await call(client, "get_symbol", name="OwnerService.find")
    items = data(answer)["results"]
    assert [item["signature"] for item in items] == [
        "find(Long id): Optional<OwnerDto>",
        "find(String lastName): List<OwnerDto>",
        "find(String lastName, int page): List<OwnerDto>",
    ]
    assert [(item["line_start"], item["line_end"]) for item in items] == [(51, 61), (63, 72), (74, 87)]
    for item in items:
        assert item["code"] == "\n".join(cited_lines(item))
        assert item["code"] in text(answer)
    assert "more lines" not in text(answer)
    assert data(answer)["omitted"] == 0


async def test_get_symbol_picks_one_overload_by_parameter_types(client: Client[Any]) -> None:
    items = data(await call(client, "get_symbol", name="OwnerService.find(String, int)"))["results"]
    assert [item["signature"] for item in items] == ["find(String lastName, int page): List<OwnerDto>"]


async def test_get_symbol_finds_a_type_by_its_qualified_name(client: Client[Any]) -> None:
    items = data(await call(client, "get_symbol", name="com.acme.shop.core.service.OwnerService"))["results"]
    assert [(item["qualified_name"], item["symbol_type"], item["stereotype"]) for item in items] == [
        ("com.acme.shop.core.service.OwnerService", "class", "service")
    ]


async def test_list_repos_shows_the_repository_with_its_chunk_count(client: Client[Any]) -> None:
    chunks = len(chunk_shop().chunks)
    answer = await call(client, "list_repos")
    [repo] = data(answer)["results"]
    assert (repo["repo"], repo["chunks"], repo["status"], repo["last_error"]) == (REPO, chunks, "ok", None)
    assert repo["generated_chunks"] == 0
    assert text(answer) == f"{REPO}  branch=None sha=- chunks={chunks} (generated 0) status=ok"


async def test_find_by_annotation_finds_both_scheduled_jobs(client: Client[Any]) -> None:
    answer = await call(client, "find_by_annotation", annotation="Scheduled")
    items = data(answer)["results"]
    assert names(items) == ["ReminderJob.sendVisitReminders", "ReminderJob.markNoShows"]
    assert items[0]["annotations"] == ['@Scheduled(cron = "0 0 * * * *")']
    assert text(answer).startswith("Carrying Scheduled:\n")


@pytest.mark.parametrize("spelling", ["@Scheduled", '@Scheduled(cron = "0 0 * * * *")', "Scheduled"])
async def test_find_by_annotation_accepts_any_spelling_of_the_annotation(client: Client[Any], spelling: str) -> None:
    items = data(await call(client, "find_by_annotation", annotation=spelling))["results"]
    assert names(items) == ["ReminderJob.sendVisitReminders", "ReminderJob.markNoShows"]


@pytest.mark.parametrize(
    ("name", "callers"),
    [
        ("NotificationService.notifyOwner", {"ReminderJob.sendVisitReminders", "OwnerEventListener.onOwnerEvent"}),
        ("notifyOwner", {"ReminderJob.sendVisitReminders", "OwnerEventListener.onOwnerEvent"}),
        (
            "com.acme.shop.core.service.OwnerService.find",
            {
                "OwnerController.findOwner",
                "OwnerController.searchOwners",
                "LegacyOwnerController.showOwner",
                "OwnerService.find",  # find(String) calls its own overload
            },
        ),
        (
            "OwnerService.create",
            {
                "OwnerController.createOwner",
                "LegacyOwnerController.processCreationForm",
                "OwnerEventListener.onOwnerEvent",
                "OwnerService.upsert",
            },
        ),
        ("OwnerService.delete", {"OwnerController.deleteOwner", "OwnerEventListener.onOwnerEvent"}),
    ],
)
async def test_get_callers_finds_exactly_the_callers_in_scope(
    client: Client[Any], name: str, callers: set[str]
) -> None:
    answer = await call(client, "get_callers", name=name)
    items = data(answer)["results"]
    assert sorted(names(items)) == sorted(callers)
    assert text(answer).startswith(f"Callers of {name}:\n")


async def test_get_callees_resolves_the_service_call_of_a_controller(client: Client[Any]) -> None:
    answer = await call(client, "get_callees", name="OwnerController.findOwner")
    calls = {item["call"]: item["targets"] for item in data(answer)["results"]}
    assert list(calls) == ["OwnerService.find", "OwnerService.find().orElseThrow"]
    # The receiver's declared type is known; the overload is not, so every `find` is offered.
    assert [target["signature"] for target in calls["OwnerService.find"]] == [
        "find(Long id): Optional<OwnerDto>",
        "find(String lastName): List<OwnerDto>",
        "find(String lastName, int page): List<OwnerDto>",
    ]
    assert calls["OwnerService.find().orElseThrow"] == []
    first, second = text(answer).splitlines()
    assert first.startswith("OwnerService.find -> com.acme.shop.core.service.OwnerService.find (acme/shop:")
    assert second == "OwnerService.find().orElseThrow -> (not indexed)"


@pytest.mark.parametrize(
    ("path", "method", "handler", "route"),
    [
        ("/api/owners/42/pets/new", "GET", "OwnerController.initNewPetForm", "GET /api/owners/{ownerId}/pets/new"),
        ("/v2/visits/7", "DELETE", "VisitResource.cancelVisit", "DELETE /v2/visits/{visitId}"),
        ("/api/owners/by-id/5", "DELETE", "OwnerController.deleteOwner", "DELETE /api/owners/by-id/{ownerId}"),
        ("/old/owners/7", "GET", "LegacyOwnerController.showOwner", "GET /old/owners/{ownerId}"),
    ],
)
async def test_find_endpoint_matches_a_concrete_path_to_its_handler(
    client: Client[Any], path: str, method: str, handler: str, route: str
) -> None:
    answer = await call(client, "find_endpoint", path=path, http_method=method)
    [item] = data(answer)["results"]
    assert short(item["qualified_name"]) == handler
    assert route in item["http"]
    assert text(answer).startswith(f"Handlers of {method} {path}:\n\n1. {item['qualified_name']} (method, ")


async def test_find_endpoint_with_another_method_finds_nothing(client: Client[Any]) -> None:
    answer = await call(client, "find_endpoint", path="/v2/visits/7", http_method="PUT")
    assert data(answer) == {"results": [], "total": 0, "offset": 0, "omitted": 0, "next_offset": None}
    assert text(answer) == "Handlers of PUT /v2/visits/7:\n\nNo results."


@pytest.mark.parametrize(
    ("path", "method", "handler"),
    [
        ("/api/owners/search", "GET", "OwnerController.searchOwners"),  # not findOwner's /{ownerId}
        ("/api/owners/bulk", "PUT", "OwnerController.bulkUpsert"),  # not updateOwner's /{ownerId}
        ("/legacy/owners/new", "GET", "LegacyOwnerController.initCreationForm"),  # not showOwner's /{ownerId}
    ],
)
async def test_find_endpoint_lists_the_handler_spring_dispatches_to_first(
    client: Client[Any], path: str, method: str, handler: str
) -> None:
    # Spring MVC prefers the more specific pattern: a literal segment beats a URI variable.
    items = data(await call(client, "find_endpoint", path=path, http_method=method))["results"]
    assert names(items)[0] == handler, names(items)


async def test_find_injections_lists_the_types_that_receive_a_repository(client: Client[Any]) -> None:
    answer = await call(client, "find_injections", type="OwnerRepository")
    structured = data(answer)
    assert structured["depends_on"] == []
    assert {owner_type(item) for item in structured["results"]} == {
        "OwnerService",
        "OrderService",
        "NotificationService",
        "ReportService",
    }
    assert structured["omitted"] == 0
    assert text(answer).startswith("OwnerRepository depends on: nothing injected\nInjected into:\n")


async def test_find_injections_also_says_what_a_service_depends_on(client: Client[Any]) -> None:
    structured = data(await call(client, "find_injections", type="com.acme.shop.core.service.NotificationService"))
    assert structured["depends_on"] == ["MailGateway", "OwnerRepository", "TemplateRenderer"]
    assert {owner_type(item) for item in structured["results"]} == {"ReminderJob", "OwnerEventListener"}


@pytest.mark.parametrize(
    ("type_name", "implementations"),
    [
        ("PricingPolicy", ["StandardPricingPolicy"]),
        ("com.acme.shop.core.order.PricingPolicy", ["StandardPricingPolicy"]),
        ("OwnerSearchRepository", ["OwnerRepository", "OwnerSearchRepositoryImpl"]),
        ("OwnerEvent", ["OwnerEvent.Registered", "OwnerEvent.Moved", "OwnerEvent.Deleted"]),
    ],
)
async def test_find_implementations_finds_exactly_the_subtypes(
    client: Client[Any], type_name: str, implementations: list[str]
) -> None:
    assert names(data(await call(client, "find_implementations", type=type_name))["results"]) == implementations


async def test_get_file_outline_lists_owner_service_in_line_order(client: Client[Any]) -> None:
    answer = await call(client, "get_file_outline", repo=REPO, path=OWNER_SERVICE)
    items = data(answer)["results"]
    assert [(short(item["qualified_name"]), item["symbol_type"]) for item in items] == [
        ("OwnerService", "class"),
        ("OwnerService.OwnerService", "constructor"),
        ("OwnerService.find", "method"),
        ("OwnerService.find", "method"),
        ("OwnerService.find", "method"),
        ("OwnerService.create", "method"),
        ("OwnerService.update", "method"),
        ("OwnerService.delete", "method"),
        ("OwnerService.saveAll", "method"),
        ("OwnerService.findPetNames", "method"),
        ("OwnerService.sortedByName", "method"),
        ("OwnerService.upsert", "method"),
        ("OwnerService.normalize", "method"),
    ]
    starts = [item["line_start"] for item in items]
    assert starts == sorted(starts)
    assert (items[0]["line_start"], items[0]["line_end"]) == (27, 192)
    header, *lines = text(answer).splitlines()
    assert header == f"{REPO}:{OWNER_SERVICE}"  # where the outline comes from (a local index: no commit, no project)
    assert len(lines) == len(items)
    assert lines[2] == "   51-61    method      find(Long id): Optional<OwnerDto>"


async def test_semantic_search_finds_the_reminder_job_from_a_question(client: Client[Any]) -> None:
    answer = await call(client, "semantic_search", query="who reminds owners about tomorrow's visits")
    top3 = names(data(answer)["results"])[:3]
    assert "ReminderJob.sendVisitReminders" in top3
    assert text(answer).startswith('Results for "who reminds owners about tomorrow\'s visits":\n')


async def test_semantic_search_applies_its_filters(client: Client[Any]) -> None:
    items = data(
        await call(
            client,
            "semantic_search",
            query="visits",
            path_prefix=JOBS_SRC,
            symbol_type="method",
            stereotype="component",
            annotation="Scheduled",
        )
    )["results"]
    assert set(names(items)) == {"ReminderJob.sendVisitReminders", "ReminderJob.markNoShows"}


async def test_semantic_search_within_a_folder_stays_there(client: Client[Any]) -> None:
    answer = await call(client, "semantic_search", query="owner", path_prefix=f"{API_SRC}/web", limit=50)
    items = data(answer)["results"]
    assert items
    assert all(item["file_path"].startswith(f"{API_SRC}/web/") for item in items)


# --- the output budget ---------------------------------------------------------------------------------------------


# --- errors --------------------------------------------------------------------------------------------------------


# --- schemas, descriptions, pages and log levels (issue 12) --------------------------------------------------------


async def test_a_path_prefix_narrows_a_lookup_to_one_module(client: Client[Any]) -> None:
    everywhere = data(await call(client, "get_callers", name="OwnerService.create"))["results"]
    in_api = data(await call(client, "get_callers", name="OwnerService.create", path_prefix="shop-api"))["results"]
    assert sorted(names(in_api)) == ["LegacyOwnerController.processCreationForm", "OwnerController.createOwner"]
    assert len(everywhere) == 4
    one_file = data(await call(client, "find_injections", type="OwnerRepository", path_prefix=OWNER_SERVICE))
    assert names(one_file["results"]) == ["OwnerService", "OwnerService.OwnerService"]


async def test_find_endpoint_callers_lists_the_feign_method_and_who_calls_it(client: Client[Any]) -> None:
    answer = await call(client, "find_endpoint_callers", path="/billing/invoices/7", http_method="GET")
    items = data(answer)["results"]
    assert names(items) == ["BillingClient.getInvoice", "InvoiceController.getInvoice"]
    assert [i["reaches_with"] for i in items] == [["GET /billing/invoices/{id} -> billing (feign)"]] * 2
    assert items[0]["through"] is None and short(items[1]["through"]) == "BillingClient.getInvoice"
    assert items[0]["outbound"] == ["GET /billing/invoices/{id} -> billing (feign)"] and "outbound" not in items[1]
    assert "reaches it with GET /billing/invoices/{id} -> billing (feign) through com.acme.shop.api" in text(answer)
    # Another method, or a path nothing calls: no callers.
    assert (
        data(await call(client, "find_endpoint_callers", path="/billing/invoices/7", http_method="DELETE"))["results"]
        == []
    )


async def test_find_endpoint_needs_a_path_or_a_caller(client: Client[Any]) -> None:
    with pytest.raises(ToolError, match="Give the route's path"):
        await client.call_tool("find_endpoint", {})
    with pytest.raises(ToolError, match="makes no HTTP call"):
        await client.call_tool("find_endpoint", {"caller": "OwnerService.find"})
