"""Hostile input to the MCP tools: what a tool echoes is bounded, and long queries are refused quickly.

In-memory transport over the `shop` fixture (as `test_tools.py`); the same caps hold over HTTP since
the tools are the same code.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final

import pytest
import pytest_asyncio
from fastmcp import Client
from fastmcp.client.client import CallToolResult
from mcp.types import TextContent

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from app.sync.local_index import index_directory
from entry.deps import open_deps
from mcp_server.arguments import not_text
from mcp_server.render import ECHO_CHARS
from mcp_server.server import create_server
from tests.support.java_fixtures import SHOP_DIR

pytestmark = pytest.mark.asyncio(loop_scope="module")

MEGABYTE: Final = "owner " * (1024 * 1024 // 6)
# Every tool argument a caller writes freely, each given a megabyte.
HUGE_ARGS: Final[list[tuple[str, dict[str, Any]]]] = [
    ("semantic_search", {"query": MEGABYTE}),
    ("get_symbol", {"name": MEGABYTE}),
    ("get_symbol", {"name": "OwnerService.find", "repo": MEGABYTE}),
    ("find_by_annotation", {"annotation": MEGABYTE}),
    ("get_callers", {"name": MEGABYTE}),
    ("get_callees", {"name": MEGABYTE}),
    ("find_endpoint", {"path": MEGABYTE, "http_method": MEGABYTE}),
    ("find_injections", {"type": MEGABYTE}),
    ("find_implementations", {"type": MEGABYTE}),
    ("get_file_outline", {"repo": "acme/shop", "path": MEGABYTE}),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deps() -> AsyncIterator[Deps]:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as opened:
        await index_directory(opened, SHOP_DIR, "acme/shop")
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def client(deps: Deps) -> AsyncIterator[Client[Any]]:
    async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as c:
        yield c


def said(result: CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent)) + str(result.structured_content)


@pytest.mark.parametrize(("tool", "args"), HUGE_ARGS, ids=[f"{t}-{','.join(a)}" for t, a in HUGE_ARGS])
async def test_a_megabyte_argument_never_comes_back_whole(client: Client[Any], tool: str, args: dict[str, Any]) -> None:
    result = await client.call_tool(tool, args, raise_on_error=False)

    assert len(said(result)) < 4_000
    assert "owner owner owner" not in said(result)[ECHO_CHARS * 3 :]


async def test_a_long_query_is_refused_with_the_cap_named(client: Client[Any]) -> None:
    result = await client.call_tool("semantic_search", {"query": MEGABYTE}, raise_on_error=False)

    assert result.is_error
    assert "longer than 2000 characters" in said(result)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("get_callees", {"name": "", "path_prefix": "\ud800"}),  # found by the MCP fuzz test on Edge
        ("get_callers", {"name": "OwnerService.find", "path_prefix": "shop\udfff"}),
        ("semantic_search", {"query": "owner \ud83d"}),
    ],
)
async def test_an_argument_that_is_not_unicode_text_is_refused_for_every_tool(
    client: Client[Any], tool: str, args: dict[str, Any]
) -> None:
    result = await client.call_tool(tool, args, raise_on_error=False)

    assert result.is_error
    assert "not valid Unicode text" in said(result)


async def test_not_text_finds_a_lone_surrogate_anywhere_in_the_arguments() -> None:
    assert not_text({"a": ["ok", {"b": "x\ud800"}]}) == "x\ud800"
    assert not_text({"k\udc00": 1}) == "k\udc00"
    assert not_text({"a": "é 中 😀", "n": 3, "l": [None, True]}) is None


async def test_a_query_with_too_many_words_is_refused(client: Client[Any]) -> None:
    result = await client.call_tool("semantic_search", {"query": "owner " * 65}, raise_on_error=False)

    assert result.is_error
    assert "more than 64 words" in said(result)


async def test_the_echoed_query_is_cut_in_the_header(client: Client[Any]) -> None:
    query = "find the owner service " + "x" * 1500  # under the query cap, far over the echo cap
    result = await client.call_tool("semantic_search", {"query": query, "max_chars": 500}, raise_on_error=False)

    assert not result.is_error
    header = said(result).split("\n", 1)[0]
    assert header.startswith("Results for 'find the owner service xxx")
    assert len(header) <= ECHO_CHARS + 40
