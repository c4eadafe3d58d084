"""Hypothesis over every MCP tool's arguments, through an in-memory fastmcp Client.

Arguments are drawn from each tool's own input schema names with hostile values (NUL, lone
surrogates, out-of-range numbers, wrong types, unknown extra arguments, missing required ones).
A refused call is a tool error the model can read; an internal failure shows as fastmcp's masked
"Error calling tool 'x'", which must never happen.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from fastmcp import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.types import TextContent

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.sync.local_index import index_directory
from entry.deps import open_deps
from mcp_server.server import create_server
from tests.fuzz.strategies import HOSTILE, HOSTILE_INT, HOSTILE_TEXT, JSON_VALUE
from tests.support.contract import TOOL_NAMES
from tests.support.java_fixtures import SHOP_DIR

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXTS = st.one_of(
    st.sampled_from(["OwnerService", "OwnerService.find", "acme/shop", "acme/", "GET", "/api/owners/42", "Scheduled"]),
    HOSTILE_TEXT,
    st.text(max_size=200),
)
INTEGERS = st.one_of(st.integers(min_value=1, max_value=50), st.integers(min_value=500, max_value=20_000), HOSTILE_INT)
WRONG = st.one_of(HOSTILE, JSON_VALUE)  # any type at all, for the validation paths


def kind(schema: dict[str, Any]) -> str:
    """`string` or `integer` (the types our tools take), looking through `anyOf [T, null]`."""
    types = {schema.get("type")} | {branch.get("type") for branch in schema.get("anyOf", [])}
    return "integer" if "integer" in types else "string"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client() -> AsyncIterator[Client[Any]]:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as deps:
        await index_directory(deps, SHOP_DIR, "acme/shop")
        async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as c:
            yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tools(client: Client[Any]) -> dict[str, dict[str, tuple[str, bool]]]:
    """Each tool's arguments, as its input schema declares them: name -> (type, required)."""
    listed = await client.list_tools()
    assert {t.name for t in listed} == set(TOOL_NAMES)
    return {
        t.name: {
            name: (kind(prop), name in t.input_schema.get("required", []))
            for name, prop in t.input_schema.get("properties", {}).items()
        }
        for t in listed
    }


@st.composite
def calls(draw: st.DrawFn, tools: dict[str, dict[str, tuple[str, bool]]]) -> tuple[str, dict[str, Any]]:
    """Mostly well-typed arguments with hostile values; sometimes a wrong type, a missing or an extra one."""
    name = draw(st.sampled_from(sorted(tools)))
    arguments: dict[str, Any] = {}
    for argument, (type_, required) in sorted(tools[name].items()):
        if draw(st.integers(0, 9)) < (9 if required else 4):
            well_typed = INTEGERS if type_ == "integer" else TEXTS
            arguments[argument] = draw(WRONG if draw(st.integers(0, 9)) == 0 else well_typed)
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(st.sampled_from(["extra", "__proto__", "\x00"]))] = draw(WRONG)
    return name, arguments


def text_of(result: Any) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
async def test_no_tool_arguments_cause_an_internal_error(
    client: Client[Any], tools: dict[str, dict[str, tuple[str, bool]]], data: Any
) -> None:
    name, arguments = data.draw(calls(tools))
    result = await client.call_tool(name, arguments, raise_on_error=False)
    if result.is_error:
        assert text_of(result) != f"Error calling tool {name!r}", arguments
