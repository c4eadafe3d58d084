"""Kotlin HTTP over the real stack (issue 29): a router DSL's routes and Kotlin client calls, linked with Java's.

Three modules of one checkout, indexed as `javakb index` indexes it: `owners` serves its routes through
a Kotlin `coRouter` whose handler is in another file; `visits` is a Java controller; `gateway` calls
`visits` from Kotlin (`WebClient`, a string template) and `owners` from Java (`RestTemplate`).
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from fastmcp import Client

from tests.support.checkouts import call, checkout_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO: Final = "acme/clinic"
FILES: Final = {
    "owners/src/main/kotlin/com/acme/owners/OwnerRoutes.kt": """package com.acme.owners

import org.springframework.context.annotation.Bean
import org.springframework.web.reactive.function.server.coRouter

@Configuration
class OwnerRoutes {
    @Bean
    fun routes(handler: OwnerHandler) = coRouter {
        "/api/owners".nest {
            GET("/{id}", handler::find)
            POST("", handler::create)
        }
    }
}
""",
    "owners/src/main/kotlin/com/acme/owners/OwnerHandler.kt": """package com.acme.owners

@Component
class OwnerHandler(private val owners: OwnerRepository) {
    suspend fun find(request: ServerRequest): ServerResponse = ok().bodyValueAndAwait(owners.load(request))

    suspend fun create(request: ServerRequest): ServerResponse = ok().bodyValueAndAwait(owners.save(request))
}
""",
    "visits/src/main/java/com/acme/visits/VisitController.java": """package com.acme.visits;

import org.springframework.web.bind.annotation.*;

@RestController
class VisitController {
    @GetMapping("/owners/{ownerId}/visits")
    java.util.List<String> visits(@PathVariable int ownerId) {
        return java.util.List.of();
    }
}
""",
    "gateway/src/main/kotlin/com/acme/gateway/VisitsClient.kt": """package com.acme.gateway

@Component
class VisitsClient(private val webClient: WebClient) {
    suspend fun visitsOf(ownerId: Int): List<String> =
        webClient.get().uri("http://visits/owners/$ownerId/visits").retrieve().awaitBody()
}
""",
    "gateway/src/main/java/com/acme/gateway/OwnersClient.java": """package com.acme.gateway;

import org.springframework.web.client.RestTemplate;

class OwnersClient {
    private final RestTemplate rest = new RestTemplate();

    String find(int id) {
        return rest.getForObject("http://owners/api/owners/" + id, String.class);
    }
}
""",
}


deps, client = checkout_fixtures(FILES, REPO)


async def test_find_endpoint_answers_a_route_of_a_kotlin_router(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint", path="GET /api/owners/7")
    [item] = found["results"]
    assert item["qualified_name"] == "com.acme.owners.OwnerRoutes.routes"
    assert item["http"] == ["GET /api/owners/{id}"]
    assert 'GET("/{id}", handler::find)' in item["code"]
    assert "handler::create" not in item["code"]  # the POST route is a part of its own


async def test_find_endpoint_refuses_a_verb_the_router_does_not_route_there(client: Client[Any]) -> None:
    result = await client.call_tool("find_endpoint", {"path": "DELETE /api/owners/7"}, raise_on_error=False)
    assert result.is_error or not (result.structured_content or {}).get("results")


async def test_find_endpoint_callers_finds_a_kotlin_web_client_call_of_a_java_handler(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint_callers", path="/owners/3/visits", http_method="GET")
    assert [r["qualified_name"] for r in found["results"]] == ["com.acme.gateway.VisitsClient.visitsOf"]


async def test_find_endpoint_callers_finds_a_java_caller_of_a_kotlin_route(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint_callers", path="/api/owners/5", http_method="GET")
    assert [r["qualified_name"] for r in found["results"]] == ["com.acme.gateway.OwnersClient.find"]


async def test_find_endpoint_callers_narrows_the_callers_to_a_language(client: Client[Any]) -> None:
    kotlin = await call(client, "find_endpoint_callers", path="/owners/3/visits", http_method="GET", language="kotlin")
    java = await call(client, "find_endpoint_callers", path="/owners/3/visits", http_method="GET", language="java")
    assert [r["qualified_name"] for r in kotlin["results"]] == ["com.acme.gateway.VisitsClient.visitsOf"]
    assert java["results"] == []


async def test_a_kotlin_call_site_reaches_the_java_handler(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint", caller="VisitsClient.visitsOf")
    assert [r["qualified_name"] for r in found["results"]] == ["com.acme.visits.VisitController.visits"]


async def test_impact_of_a_handler_reaches_its_route_and_the_remote_caller(client: Client[Any]) -> None:
    found = await call(client, "impact", symbol="OwnerHandler.find")
    endpoints = [(e["http_method"], e["route"], e["handler"]) for e in found["endpoints"]]
    assert endpoints == [("GET", "/api/owners/{id}", "com.acme.owners.OwnerRoutes.routes")]
    assert [r["qualified_name"] for r in found["remote_callers"]] == ["com.acme.gateway.OwnersClient.find"]


async def test_impact_narrowed_to_a_language_walks_both_and_shows_one(client: Client[Any]) -> None:
    java = await call(client, "impact", symbol="OwnerHandler.find", language="java")
    assert [r["qualified_name"] for r in java["remote_callers"]] == ["com.acme.gateway.OwnersClient.find"]
    assert java["endpoints"] == []  # the route is the Kotlin router's
    kotlin = await call(client, "impact", symbol="OwnerHandler.find", language="kotlin")
    assert [e["handler"] for e in kotlin["endpoints"]] == ["com.acme.owners.OwnerRoutes.routes"]
    assert kotlin["remote_callers"] == []
    refused = await client.call_tool("impact", {"symbol": "OwnerHandler.find", "language": "go"}, raise_on_error=False)
    assert refused.is_error


async def test_the_router_file_outline_lists_one_part_per_route(client: Client[Any]) -> None:
    path = "owners/src/main/kotlin/com/acme/owners/OwnerRoutes.kt"
    found = await call(client, "get_file_outline", repo=REPO, path=path)
    parts = [(r["qualified_name"], r["symbol_type"], r["line_start"]) for r in found["results"]][1:]
    assert parts == [
        ("com.acme.owners.OwnerRoutes.routes", "method_part", 8),
        ("com.acme.owners.OwnerRoutes.routes", "method_part", 12),
    ]
