"""The MCP tool `auto_context` (issue 16) over the in-memory transport, on the `shop` fixture indexed lexical-only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final

import jsonschema
import pytest
import pytest_asyncio
from fastmcp import Client
from mcp.types import TextContent

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from app.sync.local_index import index_directory
from entry.deps import open_deps
from mcp_server.server import create_server
from tests.support.java_fixtures import SHOP_DIR

pytestmark = pytest.mark.asyncio(loop_scope="module")

TASK: Final = "Make OwnerService.find throw OwnerNotFoundException instead of returning an empty Optional"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deps() -> AsyncIterator[Deps]:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as opened:
        await index_directory(opened, SHOP_DIR, "acme/shop")
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def client(deps: Deps) -> AsyncIterator[Client[Any]]:
    async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as c:
        yield c


async def schema(client: Client[Any]) -> dict[str, Any]:
    [tool] = [t for t in await client.list_tools() if t.name == "auto_context"]
    assert tool.output_schema is not None and tool.annotations is not None and tool.annotations.read_only_hint
    return tool.output_schema


def text(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


async def test_a_task_gets_its_chunks_with_citations_in_the_declared_shape(client: Client[Any]) -> None:
    result = await client.call_tool("auto_context", {"task": TASK, "max_chars": 4000})

    data = result.structured_content
    assert data is not None
    jsonschema.validate(data, await schema(client))
    first = data["results"][0]
    assert first["qualified_name"] == "com.acme.shop.core.service.OwnerService.find" and first["role"] == "named"
    assert first["repo_path"] == "acme/shop" and first["line_start"] > 0 and "code" in first
    assert text(result).startswith("<java-kb-context>") and len(text(result)) <= 4000
    assert data["chars"] == len(text(result))


async def test_an_irrelevant_task_answers_no_chunks(client: Client[Any]) -> None:
    result = await client.call_tool("auto_context", {"task": "write a haiku about autumn"})

    data = result.structured_content
    assert data is not None and data["results"] == [] and data["chars"] == 0
    assert data["relevance"] < data["threshold"]
    assert text(result).startswith("Nothing indexed is relevant enough")


async def test_an_unknown_repository_is_refused(client: Client[Any]) -> None:
    result = await client.call_tool("auto_context", {"task": TASK, "repo": "nope/nope"}, raise_on_error=False)

    assert result.is_error and "Unknown repository" in text(result)
