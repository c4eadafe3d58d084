"""Java's functional routes (`RouterFunctions`, issue 29): read by `pipeline.java_routes`, stored by Kotlin's rules."""

from __future__ import annotations

from typing import Final

import pytest

from pipeline.languages import chunk_file
from pipeline.model import Chunk, ChunkerConfig, FileResult, SourceContext, SymbolType

BUILDER: Final = """package com.acme.web;

import static org.springframework.web.reactive.function.server.RequestPredicates.accept;
import static org.springframework.web.reactive.function.server.RequestPredicates.path;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import com.acme.handlers.OwnerHandler;
import com.acme.handlers.PetHandler;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;

@Configuration
class Routes {
    private static final String PETS = "/pets";
    private final OwnerHandler owners;

    @Bean
    RouterFunction<ServerResponse> petRoutes(PetHandler handler) {
        return route()
            .GET(PETS + "/{id}", handler::get)
            .POST(PETS, accept(APPLICATION_JSON), handler::create)
            .nest(path("/owners"), b -> b
                .GET("", owners::list)
                .DELETE("/{id}", req -> ServerResponse.ok().build()))
            .path("/api", builder -> {
                builder.PUT("/pets/{id}", handler::update);
                builder.GET(handler::all);
            })
            .GET(someVariable, handler::hidden)
            .filter((request, next) -> next.handle(request))
            .build();
    }

    @Bean
    RouterFunction<ServerResponse> visits() {
        return RouterFunctions.route()
            .GET("/visits", this::list)
            .build();
    }

    @Bean
    RouterFunction<ServerResponse> legacy(PetHandler pets) {
        return route(GET("/old/pets").and(accept(APPLICATION_JSON)), pets::get)
            .andRoute(POST("/old/pets").or(PUT("/old/animals")), pets::create)
            .and(nest(path("/nested"), route(method(HttpMethod.DELETE), pets::remove)))
            .andNest(path("/more"), route(GET("/x"), this::list));
    }

    Mono<ServerResponse> list(ServerRequest request) {
        return ServerResponse.ok().build();
    }
}
"""


def chunk(source: str, path: str = "src/main/java/com/acme/web/Routes.java") -> FileResult:
    return chunk_file(source.encode(), path, SourceContext(repo_path="acme/shop"), ChunkerConfig())


def named(result: FileResult, name: str) -> list[Chunk]:
    return [c for c in result.chunks if c.qualified_name == name]


def test_builder_routes_with_patterns_predicates_nests_and_paths() -> None:
    parts = named(chunk(BUILDER), "com.acme.web.Routes.petRoutes")
    assert [(p.symbol_type, p.http_method, p.http_path) for p in parts] == [
        (SymbolType.METHOD_PART, ("GET",), ("/pets/{id}",)),
        (SymbolType.METHOD_PART, ("POST",), ("/pets",)),
        (SymbolType.METHOD_PART, ("GET",), ("/owners",)),
        (SymbolType.METHOD_PART, ("DELETE",), ("/owners/{id}",)),
        (SymbolType.METHOD_PART, ("PUT",), ("/api/pets/{id}",)),
        (SymbolType.METHOD_PART, ("GET",), ("/api",)),
    ]
    assert "com.acme.handlers.PetHandler.get" in parts[0].calls_fq  # the handler reference, a call
    assert parts[2].calls_fq[-1] == "com.acme.handlers.OwnerHandler.list"  # through the field's type
    rows = [(p.line_start, p.line_end) for p in parts]
    assert rows[0][0] == 17 and rows[-1][1] == 32  # the method tiled, its annotation's row to its brace
    assert all(rows[i][1] + 1 == rows[i + 1][0] for i in range(len(rows) - 1))


def test_a_pattern_the_file_does_not_spell_is_no_route() -> None:
    paths = {p for c in chunk(BUILDER).chunks for p in c.http_path}
    assert not any("someVariable" in p for p in paths)


def test_a_route_whose_handler_is_in_the_same_file_is_on_the_handler() -> None:
    result = chunk(BUILDER)
    handler = named(result, "com.acme.web.Routes.list")[0]
    assert (handler.http_method, handler.http_path) == (("GET",), ("/visits", "/more/x"))
    assert [(c.symbol_type, c.http_method) for c in named(result, "com.acme.web.Routes.visits")] == [
        (SymbolType.METHOD, ())
    ]


def test_static_route_and_route_nest_and_predicates() -> None:
    parts = named(chunk(BUILDER), "com.acme.web.Routes.legacy")
    assert [(p.http_method, p.http_path) for p in parts] == [
        (("GET",), ("/old/pets",)),
        (("POST", "PUT"), ("/old/pets", "/old/animals")),
        (("DELETE",), ("/nested",)),
    ]


def test_a_builder_held_in_a_local_and_a_supplier_nest() -> None:
    source = """package a;
import org.springframework.web.servlet.function.RouterFunctions;
class R {
    RouterFunction<ServerResponse> routes(H h) {
        RouterFunctions.Builder b = RouterFunctions.route();
        b.GET("/a", h::a);
        b.nest(RequestPredicates.path("/n"), () -> RouterFunctions.route(RequestPredicates.GET("/b"), h::b));
        return b.build();
    }
}
"""
    parts = named(chunk(source, "src/main/java/a/R.java"), "a.R.routes")
    # One verb: its paths are exactly the routes, so the method stays one chunk (Kotlin's rule).
    assert [(p.symbol_type, p.http_method, p.http_path) for p in parts] == [
        (SymbolType.METHOD, ("GET",), ("/a", "/n/b"))
    ]


def test_a_file_naming_no_router_function_is_chunked_as_before() -> None:
    source = BUILDER.replace("RouterFunctions", "Other")
    assert all(not c.http_path for c in chunk(source).chunks)


@pytest.mark.parametrize("depth", [200, 2000])
def test_hostile_nesting_is_read_to_a_bound(depth: int) -> None:
    nested = 'route(GET("/x"), h::x)'
    for _ in range(depth):
        nested = f'nest(path("/a"), {nested})'
    source = f"""package a;
import org.springframework.web.reactive.function.server.RouterFunctions;
class R {{ RouterFunction<ServerResponse> r(H h) {{ return {nested}; }} }}
"""
    result = chunk(source, "src/main/java/a/R.java")  # no RecursionError: nests past the bound are unread
    assert [c.http_path for c in named(result, "a.R.r")] == [()]


def test_a_router_held_in_a_local_is_read_under_the_nest_that_takes_it() -> None:
    source = """package a;
import static org.springframework.web.reactive.function.server.RouterFunctions.nest;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;
class R {
    RouterFunction<ServerResponse> routes(H h) {
        RouterFunction<ServerResponse> users = route(GET("/{name}"), h::user);
        RouterFunction<ServerResponse> posts = route(GET("/"), h::all).andRoute(POST("/"), h::create);
        RouterFunction<ServerResponse> alone = route(DELETE("/x"), h::remove);
        return nest(path("/posts"), posts).andNest(path("/users"), users).and(alone);
    }
}
"""
    parts = named(chunk(source, "src/main/java/a/R.java"), "a.R.routes")
    assert [(p.http_method, p.http_path) for p in parts] == [  # one part per route, routes on one row together
        (("GET",), ("/users/{name}",)),
        (("GET", "POST"), ("/posts",)),
        (("DELETE",), ("/x",)),
    ]
