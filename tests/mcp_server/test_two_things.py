"""A question that names two things gets both on the first page (issue 28), over `semantic_search` for real.

`acme/gateway` (Java written for this test) holds a customers client with many methods that all speak of
customers (and of visits) and one visits client: a question about combining "the customers service and
the visits service" ranks the customers client's methods first by their words alone; `app.search.aspects`
brings the visits client into the first five. Indexed with `index_directory` into an in-memory embedded Qdrant,
bare settings (the embedded model).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final

import pytest
import pytest_asyncio
from fastmcp import Client

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.search import boosts
from app.sync.local_index import index_directory
from entry.deps import open_deps
from mcp_server.server import create_server
from tests.mcp_server.test_plain_answers import written
from tests.mcp_server.test_tools import call, data

pytestmark = pytest.mark.asyncio(loop_scope="module")

PKG: Final = "src/main/java/demo/gateway/"
QUESTION: Final = "how does the gateway combine the customers service and the visits service"


def customers_client() -> str:
    verbs = ("find", "list", "update", "delete", "create", "search", "count", "export", "merge", "sync", "load")
    methods = "".join(
        f"""
    /** The gateway combines: {verb}s customers and their visits through the customers service. */
    public String {verb}Customers(String customersServiceQuery) {{
        return web.get().uri(customersService + "/customers/{verb}?q=" + customersServiceQuery).retrieve().toString();
    }}
"""
        for verb in verbs
    )
    return f"""package demo.gateway;

/** The customers service client of the gateway. */
public class CustomersServiceClient {{
    private final String customersService = "http://customers-service";
    private final WebClient web;

    public CustomersServiceClient(WebClient web) {{
        this.web = web;
    }}
{methods}}}
"""


FILES: Final = {
    PKG + "CustomersServiceClient.java": customers_client(),
    PKG + "VisitsServiceClient.java": """package demo.gateway;

public class VisitsServiceClient {
    private final WebClient web;

    public VisitsServiceClient(WebClient web) {
        this.web = web;
    }

    public String visitsForPets(String petIds) {
        return web.get().uri("http://visits-service/pets/visits?petId=" + petIds).retrieve().toString();
    }
}
""",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client[Any]]:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as deps:
        await index_directory(deps, written(tmp_path_factory.mktemp("gateway"), FILES), "acme/gateway")
        async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as c:
            yield c


async def first_five(client: Client[Any]) -> list[str]:
    found = data(await call(client, "semantic_search", query=QUESTION, max_chars=20_000))
    return [str(item["qualified_name"]) for item in found["results"][:5]]


async def test_both_things_a_question_joins_are_on_the_first_page(client: Client[Any]) -> None:
    top = await first_five(client)

    assert any(name.startswith("demo.gateway.VisitsServiceClient") for name in top), top
    assert any(name.startswith("demo.gateway.CustomersServiceClient") for name in top), top


async def test_without_the_step_the_first_thing_fills_the_page(
    client: Client[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(boosts, "DISABLED", {"aspects"})

    top = await first_five(client)

    assert not any(name.startswith("demo.gateway.VisitsServiceClient") for name in top), top
