"""Test code is its own scope (issue 27): with `JAVAKB_CHUNKING__INDEX_TESTS` a test class is indexed flagged
`test`, found with `scope="tests"` and never with the default scope, in MCP `semantic_search` and REST search,
each under the caller's access; without the setting no test file is indexed at all.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastmcp import Client
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.auth.access import Access
from app.core.settings import (
    ChunkingSettings,
    EmbeddingSettings,
    PostgresSettings,
    QdrantSettings,
    QueueSettings,
    Settings,
)
from app.runtime import Deps
from app.sync.local_index import index_directory
from entry.deps import open_deps
from entry.web import create_app
from mcp_server.server import create_server
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.scope import Scope
from tests.support.sources import service_java as service
from tests.support.tokens import service_token

MAIN, TEST = "src/main/java/com/acme/", "src/test/java/com/acme/"
READER, STRANGER = "reader-token-for-tests-0123456", "stranger-token-for-tests-012345"
TEST_CLASS = """package com.acme;

class CartTest {
    @Test
    void checksTheTotalsOfACart() {
        assertEquals(3, new Cart().run());
    }
}
"""


def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    for rel, content in {MAIN + "Cart.java": service("Cart"), TEST + "CartTest.java": TEST_CLASS}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    return root


def settings_of(tmp_path: Path, dsn: str, redis_url: str, *, index_tests: bool) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue="javakb:test:tests"),
        qdrant=QdrantSettings(path=str(tmp_path / f"store-{index_tests}")),
        embedding=EmbeddingSettings(provider="none"),
        chunking=ChunkingSettings(index_tests=index_tests),
        service_tokens=[service_token(READER, ["shop"], "reader"), service_token(STRANGER, ["acme/"], "stranger")],
    )


def test_test_code_is_in_scope_only_with_its_setting_and_flagged() -> None:
    off, on = Scope.from_config(ChunkerConfig()), Scope.from_config(ChunkerConfig(index_tests=True))
    test_file = "m/" + TEST + "CartTest.java"
    assert not off.matches(test_file) and on.matches(test_file)
    assert not on.matches("m/src/test/resources/cart.xml") and not on.matches("m/target/src/test/java/A.java")
    assert off.matches("m/" + MAIN + "Cart.java") and on.matches("m/" + MAIN + "Cart.java")
    config = ChunkerConfig(index_tests=True)
    tested = chunk_source(TEST_CLASS.encode(), TEST + "CartTest.java", SourceContext(repo_path="shop"), config)
    main = chunk_source(service("Cart").encode(), MAIN + "Cart.java", SourceContext(repo_path="shop"), config)
    assert tested.chunks and all(c.test for c in tested.chunks) and not any(c.test for c in main.chunks)


async def mcp_names(deps: Deps, access: Access, **arguments: Any) -> list[str]:
    async with Client(create_server(lambda: deps, unauthenticated=access)) as client:
        result = await client.call_tool("semantic_search", {"query": "CartTest totals cart", **arguments})
    assert result.structured_content is not None
    return [str(i["qualified_name"]) for i in result.structured_content["results"]]


async def indexed(settings: Settings, root: Path) -> None:
    reader = Access(subject="service:reader", repo_prefixes=("shop",))
    stranger = Access(subject="service:stranger", repo_prefixes=("acme/",))
    async with open_deps(settings) as deps:
        run = await index_directory(deps, root, "shop")
        assert run.counts.files == (2 if settings.chunking.index_tests else 1)
        if not settings.chunking.index_tests:
            assert not [n for n in await mcp_names(deps, reader, scope="all") if "CartTest" in n]
            return
        found = await mcp_names(deps, reader, scope="tests")
        assert found and all(n.startswith("com.acme.CartTest") for n in found)
        assert not [n for n in await mcp_names(deps, reader) if "CartTest" in n]  # the default scope: code
        assert [n for n in await mcp_names(deps, reader, scope="all") if "CartTest" in n]
        async with Client(create_server(lambda: deps, unauthenticated=stranger)) as client:
            refused = await client.call_tool(
                "semantic_search", {"query": "CartTest", "scope": "tests"}, raise_on_error=False
            )
        assert refused.is_error and "CartTest" not in str(refused.content)


def rest_names(client: TestClient, token: str, **params: str) -> list[str]:
    answer = client.get(
        "/api/v1/search", params={"q": "CartTest totals cart", **params}, headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200, answer.text
    return [str(i["qualified_name"]) for i in answer.json()["results"]]


def test_a_test_class_is_found_with_scope_tests_only_under_the_callers_access(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    root = checkout(tmp_path)
    settings = settings_of(tmp_path, clean_db, clean_redis, index_tests=True)
    asyncio.run(asyncio.wait_for(indexed(settings, root), timeout=40))
    with TestClient(create_app(settings)) as client:
        found = rest_names(client, READER, scope="tests")
        assert found and all(n.startswith("com.acme.CartTest") for n in found)
        assert not [n for n in rest_names(client, READER) if "CartTest" in n]
        assert not rest_names(client, STRANGER, scope="tests")


def test_without_the_setting_no_test_file_is_indexed(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    settings = settings_of(tmp_path, clean_db, clean_redis, index_tests=False)
    asyncio.run(asyncio.wait_for(indexed(settings, checkout(tmp_path)), timeout=40))
