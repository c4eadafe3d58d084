"""Java functional routes over the real stack (issue 29): `find_endpoint` answers `RouterFunctions` routes.

A WebFlux builder whose handler is in another file (answered by the router's part for the route) and a
static `route(...)` whose handler is in the router's own file (answered by the handler), as Kotlin's are.
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from fastmcp import Client

from tests.support.checkouts import call, checkout_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO: Final = "acme/pets"
FILES: Final = {
    "src/main/java/com/acme/pets/PetRoutes.java": """package com.acme.pets;

import static org.springframework.web.reactive.function.server.RequestPredicates.GET;
import static org.springframework.web.reactive.function.server.RequestPredicates.path;
import static org.springframework.web.reactive.function.server.RouterFunctions.nest;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;

@Configuration
class PetRoutes {
    @Bean
    RouterFunction<ServerResponse> pets(PetHandler handler) {
        return RouterFunctions.route()
            .GET("/pets/{id}", handler::get)
            .POST("/pets", handler::create)
            .build();
    }

    @Bean
    RouterFunction<ServerResponse> health() {
        return nest(path("/internal"), route(GET("/health"), this::status));
    }

    Mono<ServerResponse> status(ServerRequest request) {
        return ServerResponse.ok().build();
    }
}
""",
    "src/main/java/com/acme/pets/PetHandler.java": """package com.acme.pets;

@Component
class PetHandler {
    Mono<ServerResponse> get(ServerRequest request) {
        return ServerResponse.ok().build();
    }

    Mono<ServerResponse> create(ServerRequest request) {
        return ServerResponse.ok().build();
    }
}
""",
}


deps, client = checkout_fixtures(FILES, REPO)


async def test_find_endpoint_answers_a_builder_route_with_the_routers_part(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint", path="GET /pets/7")
    [item] = found["results"]
    assert item["qualified_name"] == "com.acme.pets.PetRoutes.pets"
    assert item["http"] == ["GET /pets/{id}"]
    assert 'GET("/pets/{id}", handler::get)' in item["code"]
    assert "handler::create" not in item["code"]  # the POST route is a part of its own


async def test_find_endpoint_answers_a_nested_static_route_with_its_handler_in_the_file(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint", path="GET /internal/health")
    assert [(r["qualified_name"], r["http"]) for r in found["results"]] == [
        ("com.acme.pets.PetRoutes.status", ["GET /internal/health"])
    ]


async def test_find_endpoint_refuses_a_verb_the_router_does_not_route_there(client: Client[Any]) -> None:
    result = await client.call_tool("find_endpoint", {"path": "DELETE /pets/7"}, raise_on_error=False)
    assert result.is_error or not (result.structured_content or {}).get("results")
