"""How the MCP tools answer beyond their hits: the budget, tool errors, output schemas, paging by offset and
what fastmcp logs, over the in-memory transport on the `shop` fixture indexed as in `test_tools.py`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any, Final

import jsonschema
import pytest
from fastmcp import Client
from fastmcp.client.client import CallToolResult
from fastmcp.exceptions import ToolError

from app.auth.access import LOCAL
from app.core.errors import StorageError
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from entry.deps import open_deps
from mcp_server.render import SET_CODE_FIRST
from mcp_server.server import create_server
from tests.mcp_server import test_tools
from tests.mcp_server.test_tools import (
    CALLS,
    OWNER_SERVICE,
    REPO,
    TOOLS,
    assert_tool_error,
    call,
    cited_lines,
    data,
    names,
    text,
)

deps = test_tools.deps  # the module's fixtures: its own index of the `shop` fixture and a client on it
client = test_tools.client
pytestmark = pytest.mark.asyncio(loop_scope="module")  # every test shares the module's index and event loop

BLOCK_START = re.compile(r"\n\n(?=\d+\. )")  # blocks are joined by a blank line; each starts with its rank


def blocks(answer: CallToolResult) -> list[str]:
    """The header, then one block per result (a trailing note on left-out results stays on the last block)."""
    return BLOCK_START.split(text(answer))


async def test_a_small_budget_cuts_whole_results_and_says_how_many(client: Client[Any]) -> None:
    everything = data(await call(client, "semantic_search", query="owner", limit=20, max_chars=100_000))
    assert everything["omitted"] == 0
    answer = await call(client, "semantic_search", query="owner", limit=20, max_chars=1500)
    shown, omitted = data(answer)["results"], data(answer)["omitted"]
    assert omitted > 0
    assert len(shown) + omitted == len(everything["results"])
    assert names(shown) == names(everything["results"])[: len(shown)]
    body = text(answer)
    assert body.endswith(
        f"\n\n[Shown 1-{len(shown)} of 20: {omitted} more left out by the output budget. "
        f"Call again with offset={len(shown)} for the rest, or raise max_chars.]"
    )
    assert data(answer)["next_offset"] == len(shown)
    assert len(blocks(answer)) == 1 + len(shown)
    for item in shown:  # every shown result is whole: its code and its closing fence are all there
        assert f"```java\n{item['code']}\n```" in body


async def test_the_first_result_is_shown_whole_even_over_the_budget(client: Client[Any]) -> None:
    answer = await call(client, "get_symbol", name="OwnerService.find", max_chars=500)
    [item] = data(answer)["results"]
    assert data(answer)["omitted"] == 2
    assert item["code"] == "\n".join(cited_lines(item))
    assert f"```java\n{item['code']}\n```" in text(answer)


async def test_find_injections_reports_what_the_budget_left_out(client: Client[Any]) -> None:
    structured = data(await call(client, "find_injections", type="OwnerRepository", max_chars=500))
    assert len(structured["results"]) == 1
    assert (structured["omitted"], structured["next_offset"], structured["total"]) == (5, 1, 6)


async def test_the_text_never_exceeds_the_budget_once_a_result_fits(client: Client[Any]) -> None:
    # Ask for exactly the room the header and the first two results take: the separators and the
    # note on left-out results must fit in max_chars too, or an agent's budget is overdrawn.
    full = await call(client, "semantic_search", query="owner", limit=20, max_chars=100_000)
    header, first, second, *_ = blocks(full)
    budget = len(header) + len(first) + len(second)
    answer = await call(client, "semantic_search", query="owner", limit=20, max_chars=budget)
    assert len(text(answer)) <= budget, f"{len(text(answer))} characters for max_chars={budget}"


TOOLS_WITH_REPO: Final = [tool for tool in CALLS if tool != "get_file_outline"]


@pytest.mark.parametrize("tool", TOOLS_WITH_REPO)
async def test_an_unknown_repository_is_a_tool_error_naming_the_indexed_ones(client: Client[Any], tool: str) -> None:
    result = await client.call_tool(tool, {**CALLS[tool], "repo": "nope/nope"}, raise_on_error=False)
    assert_tool_error(result, "Unknown repository 'nope/nope'. Indexed: acme/shop")


async def test_an_unknown_repository_in_an_outline_is_a_tool_error(client: Client[Any]) -> None:
    result = await client.call_tool(
        "get_file_outline", {"repo": "nope/nope", "path": OWNER_SERVICE}, raise_on_error=False
    )
    assert_tool_error(result, "Unknown repository 'nope/nope'")


async def test_a_tool_error_raises_tool_error_in_the_client_with_the_message(client: Client[Any]) -> None:
    with pytest.raises(ToolError, match=r"^Unknown repository 'nope/nope'\. Indexed: acme/shop$"):
        await client.call_tool("get_symbol", {"name": "OwnerService.find", "repo": "nope/nope"})


async def test_a_bad_symbol_type_is_a_tool_error_listing_the_good_ones(client: Client[Any]) -> None:
    result = await client.call_tool(
        "semantic_search", {"query": "owner", "symbol_type": "banana"}, raise_on_error=False
    )
    assert_tool_error(
        result,
        "Bad symbol_type 'banana'; use one of annotation, class, config, constructor, enum, interface, method, "
        "method_part, record.",
    )


async def test_a_budget_below_the_minimum_is_rejected_with_the_reason(client: Client[Any]) -> None:
    result = await client.call_tool("semantic_search", {"query": "owner", "max_chars": 10}, raise_on_error=False)
    assert_tool_error(result, "max_chars")
    assert "greater than or equal to 500" in text(result)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("get_symbol", {"name": "NoSuchThing"}, "No symbol named 'NoSuchThing'."),
        ("get_callees", {"name": "NoSuch.method"}, "No method named 'NoSuch.method', or it calls nothing."),
        ("get_file_outline", {"repo": REPO, "path": "nope.java"}, "No indexed file 'nope.java' in 'acme/shop'."),
    ],
)
async def test_a_name_that_is_not_indexed_is_a_tool_error(
    client: Client[Any], tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert_tool_error(await client.call_tool(tool, arguments, raise_on_error=False), message)


@pytest.mark.parametrize("tool", TOOLS)
async def test_with_nothing_indexed_every_tool_says_so(tool: str) -> None:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as empty:
        await empty.store.ensure(await empty.index_model())  # what the app's lifespan does: a store, no points
        async with Client(create_server(lambda: empty, unauthenticated=LOCAL)) as client:
            result = await client.call_tool(tool, CALLS.get(tool, {}), raise_on_error=False)
    assert_tool_error(result, "Nothing is indexed yet: no repository has been synced.")


async def test_an_unexpected_failure_reaches_the_client_without_details() -> None:
    # A store whose collection was never created fails inside qdrant-client; the server masks it.
    async with (
        open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as broken,
        Client(create_server(lambda: broken, unauthenticated=LOCAL)) as client,
    ):
        result = await client.call_tool("list_repos", {}, raise_on_error=False)
    assert result.is_error
    assert text(result) == "Error calling tool 'list_repos'"


async def test_every_tool_declares_an_output_schema_and_describes_every_parameter(client: Client[Any]) -> None:
    for tool in await client.list_tools():
        schema = tool.output_schema
        assert schema is not None, tool.name
        assert {"results", "total", "offset", "omitted", "next_offset"} <= set(schema["properties"]), tool.name
        for name, parameter in tool.input_schema["properties"].items():
            assert parameter.get("description"), f"{tool.name}.{name} has no description"


@pytest.mark.parametrize("tool", TOOLS)
async def test_every_structured_answer_is_what_its_schema_says(client: Client[Any], tool: str) -> None:
    schemas = {t.name: t.output_schema for t in await client.list_tools()}
    answer = data(await call(client, tool, **CALLS.get(tool, {})))
    schema = schemas[tool]
    assert schema is not None
    jsonschema.validate(answer, schema)
    assert answer["results"], "an answer with results, or the check proves little"
    assert answer["total"] == answer["offset"] + len(answer["results"]) + answer["omitted"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("find_injections", {"type": "OwnerRepository"}),
        ("semantic_search", {"query": "owner", "limit": 20}),
        ("get_file_outline", {"repo": REPO, "path": OWNER_SERVICE}),
    ],
)
async def test_next_offset_pages_through_the_whole_answer(client: Client[Any], tool: str, arguments: Any) -> None:
    whole = data(await call(client, tool, **arguments, max_chars=100_000))
    assert whole["next_offset"] is None and whole["omitted"] == 0
    pages: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        answer = await call(client, tool, **arguments, offset=offset, max_chars=500)
        pages.append(data(answer))
        offset = data(answer)["next_offset"]
        if offset is not None:
            assert f"offset={offset}" in text(answer)
    assert len(pages) > 1
    seen = [item for page in pages for item in page["results"]]
    key = ("qualified_name", "line_start")
    assert [tuple(i[k] for k in key) for i in seen] == [tuple(i[k] for k in key) for i in whole["results"]]


async def test_an_offset_past_the_end_says_how_many_there_are(client: Client[Any]) -> None:
    answer = await call(client, "find_injections", type="OwnerRepository", offset=50)
    assert data(answer)["results"] == [] and data(answer)["total"] == 6
    assert text(answer).endswith("No results at offset 50: there are 6.")


async def test_a_set_answer_shows_the_code_of_the_first_few_members_only(client: Client[Any]) -> None:
    compact = data(await call(client, "find_injections", type="OwnerRepository"))["results"]
    assert len(compact) == 6
    assert ["code" in item for item in compact] == [True] * SET_CODE_FIRST + [False] * (6 - SET_CODE_FIRST)
    full = data(await call(client, "find_injections", type="OwnerRepository", code=True))["results"]
    assert all("code" in item for item in full)
    assert names(full) == names(compact)


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def fastmcp_logs() -> Iterator[Records]:
    """What fastmcp logs (its loggers do not propagate to the root, so caplog would not see them)."""
    handler = Records()
    logger = logging.getLogger("fastmcp")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


async def test_a_miss_is_logged_at_info_not_as_a_server_error(client: Client[Any], fastmcp_logs: Records) -> None:
    result = await client.call_tool("get_symbol", {"name": "NoSuchThing"}, raise_on_error=False)
    assert result.is_error and "No symbol named 'NoSuchThing'" in text(result)
    levels = [r.levelno for r in fastmcp_logs.records if "get_symbol" in r.getMessage()]
    assert levels == [logging.INFO]


async def test_a_real_failure_is_still_logged_as_an_error(
    deps: Deps, client: Client[Any], fastmcp_logs: Records, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> list[Any]:
        raise StorageError("the store is gone")

    monkeypatch.setattr(deps.search, "symbol", broken)
    result = await client.call_tool("get_symbol", {"name": "OwnerService.find"}, raise_on_error=False)
    assert result.is_error and "the store is gone" not in text(result)  # masked for the model
    assert logging.ERROR in [r.levelno for r in fastmcp_logs.records if "get_symbol" in r.getMessage()]
