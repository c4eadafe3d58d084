"""Kotlin's outbound HTTP calls and router DSL routes (issue 29): the records Java's reader gives, or Java's rules'."""

from __future__ import annotations

from typing import Final

import pytest

from pipeline.languages import chunk_file
from pipeline.model import Chunk, ChunkerConfig, FileResult, SkipReason, SourceContext, SymbolType

KOTLIN_CLIENT: Final = """package com.acme.visits

import org.springframework.web.client.RestTemplate

const val VETS = "/vets"

class VisitsClient(
    private val webClient: WebClient,
    @Value("\\${visits.url:http://visits-service}") private val visits: String,
) {
    private val rest = RestTemplate()
    private val customers = "http://customers-service"

    fun load(id: Long, ownerId: Int) {
        val url = "$customers/owners/${ownerId}/pets"
        webClient.get().uri("/pets/{id}", id).retrieve()
        webClient.method(HttpMethod.POST).uri("http://api-gateway/pets/" + id)
        rest.getForObject("http://vets-service/vets", String::class.java)
        rest.exchange(url, HttpMethod.PUT, null, String::class.java)
        rest.postForEntity("$visits/visits", null, String::class.java)
        WebClient.create("http://vets-service").get().uri(VETS)
        webClient.get().uri { b -> b.path("/z").build() }
        rest.getForObject(nobodyKnows + "/owners", String::class.java)
    }

    fun none() = rest.toString()
}
"""

JAVA_CLIENT: Final = """package com.acme.visits;

import org.springframework.web.client.RestTemplate;

class VisitsClient {
    static final String VETS = "/vets";
    private final WebClient webClient;
    @Value("${visits.url:http://visits-service}") private String visits;
    private final RestTemplate rest = new RestTemplate();
    private final String customers = "http://customers-service";

    void load(long id, int ownerId) {
        String url = customers + "/owners/" + ownerId + "/pets";
        webClient.get().uri("/pets/{id}", id).retrieve();
        webClient.method(HttpMethod.POST).uri("http://api-gateway/pets/" + id);
        rest.getForObject("http://vets-service/vets", String.class);
        rest.exchange(url, HttpMethod.PUT, null, String.class);
        rest.postForEntity(visits + "/visits", null, String.class);
        WebClient.create("http://vets-service").get().uri(VETS);
        webClient.get().uri(b -> b.path("/z").build());
        rest.getForObject(nobodyKnows + "/owners", String.class);
    }
}
"""

ROUTER: Final = """package com.acme.web

import com.acme.handlers.OwnerHandler

const val API = "/api"

@Configuration
class Routes(private val vets: VetHandler) {
    @Bean
    fun ownerRoutes(handler: OwnerHandler) = coRouter {
        "/api".nest {
            GET("/owners/{id}", handler::get)
            POST("", handler::create)
        }
        accept(APPLICATION_JSON).nest {
            GET("/vets", vets::list)
            (GET("/a") or GET("/b")).invoke(vets::list)
        }
        GET("/lambda") { request -> ok().buildAndAwait() }
        path(API).nest { DELETE("/{id}", ::remove) }
        GET(someVariable, handler::unread)
    }

    @Bean
    fun single(handler: OwnerHandler) = router { GET("/only", handler::get) }

    suspend fun remove(request: ServerRequest) = ok().buildAndAwait()
}

@Component
class VetHandler {
    suspend fun list(request: ServerRequest): ServerResponse = ok().buildAndAwait()
}
"""


def chunk(source: str, path: str) -> FileResult:
    return chunk_file(source.encode(), path, SourceContext(repo_path="acme/shop"), ChunkerConfig())


def named(result: FileResult, name: str) -> list[Chunk]:
    return [c for c in result.chunks if c.qualified_name == name]


def test_kotlin_client_calls_are_recorded_as_java_records_the_same_calls() -> None:
    load = "com.acme.visits.VisitsClient.load"
    kotlin = named(chunk(KOTLIN_CLIENT, "src/main/kotlin/com/acme/visits/VisitsClient.kt"), load)
    java = named(chunk(JAVA_CLIENT, "src/main/java/com/acme/visits/VisitsClient.java"), load)
    assert kotlin[0].outbound == (
        "web_client GET - /pets/{id}",
        "web_client POST api-gateway /pets/{id}",
        "rest_template GET vets-service /vets",
        "rest_template PUT customers-service /owners/{ownerId}/pets",
        "rest_template POST ${visits.url:http://visits-service} /visits",  # as written: configured at query time
        "web_client GET vets-service /vets",
        'web_client GET - ?{ b -> b.path("/z").build() }',
        "rest_template GET - /owners",  # a variable before the path: a base from configuration
    )
    # The same rules give the same records; a lambda is written as its language writes it.
    assert [r for r in kotlin[0].outbound if " ?" not in r] == [r for r in java[0].outbound if " ?" not in r]
    assert [r.split(" ?")[0] for r in java[0].outbound] == [r.split(" ?")[0] for r in kotlin[0].outbound]


def test_a_function_calling_no_client_has_no_outbound_calls() -> None:
    result = chunk(KOTLIN_CLIENT, "src/main/kotlin/com/acme/visits/VisitsClient.kt")
    assert named(result, "com.acme.visits.VisitsClient.none")[0].outbound == ()


def test_a_property_set_by_a_setter_is_no_base_but_its_literal_names_the_default_service() -> None:
    source = """package a
class C(private val rest: RestTemplate) {
    var host = "http://things-service/"
    fun configure(h: String) { host = h }
    fun call() = rest.getForObject(host + "things/list", String::class.java)
}
"""
    call = named(chunk(source, "src/main/kotlin/a/C.kt"), "a.C.call")[0]
    assert call.outbound == ('rest_template GET things-service ?host + "things/list"',)


def test_router_routes_with_their_nested_paths() -> None:
    result = chunk(ROUTER, "src/main/kotlin/com/acme/web/Routes.kt")
    parts = named(result, "com.acme.web.Routes.ownerRoutes")
    routes = [(p.symbol_type, p.http_method, p.http_path) for p in parts]
    assert routes == [
        (SymbolType.METHOD_PART, ("GET",), ("/api/owners/{id}",)),
        (SymbolType.METHOD_PART, ("POST",), ("/api",)),
        (SymbolType.METHOD_PART, ("GET",), ("/lambda",)),
    ]
    assert parts[0].calls_fq[-1] == "com.acme.handlers.OwnerHandler.get"  # the handler, resolved as a call
    assert [(p.line_start, p.line_end) for p in parts] == [(9, 12), (13, 13), (14, 22)]  # the function tiled


def test_a_route_whose_handler_is_in_the_same_file_is_on_the_handler() -> None:
    result = chunk(ROUTER, "src/main/kotlin/com/acme/web/Routes.kt")
    vets = named(result, "com.acme.web.VetHandler.list")[0]
    assert (vets.http_method, vets.http_path) == (("GET",), ("/vets", "/a", "/b"))
    remove = named(result, "com.acme.web.Routes.remove")[0]
    assert (remove.http_method, remove.http_path) == (("DELETE",), ("/api/{id}",))


def test_a_router_with_one_verb_is_one_chunk() -> None:
    single = named(chunk(ROUTER, "src/main/kotlin/com/acme/web/Routes.kt"), "com.acme.web.Routes.single")
    assert [(c.symbol_type, c.http_method, c.http_path) for c in single] == [(SymbolType.METHOD, ("GET",), ("/only",))]


def test_a_pattern_the_file_does_not_spell_is_no_route() -> None:
    result = chunk(ROUTER, "src/main/kotlin/com/acme/web/Routes.kt")
    paths = {p for c in result.chunks for p in c.http_path}
    assert not any("someVariable" in p or p == "/" for p in paths)


def test_a_broken_router_keeps_its_readable_routes_and_the_rest_of_the_file() -> None:
    broken = ROUTER.replace('POST("", handler::create)', 'POST("", handler::create')
    result = chunk(broken, "src/main/kotlin/com/acme/web/Routes.kt")
    assert result.skipped and result.skipped[0].reason is SkipReason.SYNTAX_ERROR
    names = {c.qualified_name for c in result.chunks}
    assert "com.acme.web.VetHandler.list" in names
    assert named(result, "com.acme.web.Routes.single")[0].http_path == ("/only",)


def test_routes_under_an_if_and_in_a_loop_are_read_when_their_pattern_is_spelt() -> None:
    source = """package a
@Configuration
class R {
    @Bean
    fun routes(h: H) = router {
        if (seo) {
            GET("/robots.txt") { ok().build() }
        } else GET("/robots", h::robots)
        (2012..2025).forEach { year ->
            GET("/$year/about") { ok().build() }
            GET("/archive", h::archive)
        }
    }.filter { request, next -> next(request) }
}
"""
    routes = named(chunk(source, "src/main/kotlin/a/R.kt"), "a.R.routes")[0]
    assert (routes.http_method, routes.http_path) == (("GET",), ("/robots.txt", "/robots", "/archive"))


def test_rest_client_safe_calls_and_value_injected_bases() -> None:
    source = """package a
class C(
    private val restClient: RestClient,
    private val webClient: WebClient?,
    @Value("\\${owners.url:http://owners}") ownersUrl: String,
) {
    private val owners = ownersUrl
    @Value("\\${vets.url}") lateinit var vets: String

    fun call(id: Int) {
        restClient.get().uri("$owners/owners/$id").retrieve()
        webClient?.put()?.uri("$vets/vets")?.retrieve()
    }
}
"""
    call = named(chunk(source, "src/main/kotlin/a/C.kt"), "a.C.call")[0]
    # Placeholders as written (Java's rule): the configuration decides at query time.
    assert call.outbound == (
        "rest_client GET ${owners.url:http://owners} /owners/{id}",
        "web_client PUT ${vets.url} /vets",
    )


def test_hostile_nesting_is_read_to_a_bound_not_to_the_recursion_limit() -> None:
    deep = 3000
    router = (
        "class R { fun r(h: H) = router { (" + " or ".join(f'GET("/a{i}")' for i in range(deep)) + ").invoke(h::f) } }"
    )
    nests = "class N { fun r(h: H) = router { " + '"/a".nest { ' * deep + 'GET("/x", h::f)' + " }" * deep + " } }"
    concat = (
        "class C(val rest: RestTemplate) { fun f() = rest.getForObject("
        + " + ".join(['"/a"'] * deep)
        + ", X::class.java) }"
    )
    result = chunk("package a\n" + "\n".join((router, nests, concat)) + "\nclass After\n", "src/main/kotlin/a/R.kt")
    names = {c.qualified_name for c in result.chunks}
    assert {"a.R.r", "a.N.r", "a.C.f", "a.After"} <= names
    java = (
        "class C { RestTemplate rest; void f() { rest.getForObject(" + " + ".join(['"/a"'] * deep) + ", X.class); } }"
    )
    assert named(chunk(java, "src/main/java/C.java"), "C.f")[0].outbound  # Java's reader is bounded alike


HELD_CLIENTS_KT: Final = """package a
class Calls(
    builder: WebClient.Builder,
    templates: RestTemplateBuilder,
    @Value("\\${clients.tpl.url}") tpl: String,
    @Value("\\${clients.visits.url}") private val baseUrl: String,
) {
    private val visits = builder.baseUrl(baseUrl).build()
    private val fixed = WebClient.create("http://fixed-service/v1")
    private val templated: RestTemplate = templates.rootUri(tpl).build()
    private val changed: WebClient

    init {
        changed = WebClient.create("http://one")
    }

    fun held() = visits.get().uri("/pets/visits").retrieve()
    fun heldLiteral() = fixed.get().uri("/things").retrieve()
    fun heldTemplate() = templated.getForObject("/owners", String::class.java)
    fun local() {
        val client = WebClient.create("http://local-service")
        client.get().uri("/local").retrieve()
    }
    fun assigned() = changed.get().uri("/x").retrieve()
    fun shadowed(fixed: WebClient) = fixed.get().uri("/y").retrieve()
}
"""


@pytest.mark.parametrize(
    ("method", "outbound"),
    [
        # Java's rules (`client_calls.BASE_CALLS`, `field_values.settle`'s bases): the client keeps its base URL.
        ("held", "web_client GET ${clients.visits.url} /pets/visits"),
        ("heldLiteral", "web_client GET fixed-service /v1/things"),
        ("heldTemplate", "rest_template GET ${clients.tpl.url} /owners"),
        ("local", "web_client GET local-service /local"),
        ("assigned", "web_client GET one /x"),
        ("shadowed", "web_client GET - /y"),  # a parameter named like the property is not it
    ],
)
def test_a_kotlin_property_holding_a_client_keeps_its_base_url(method: str, outbound: str) -> None:
    result = chunk(HELD_CLIENTS_KT, "src/main/kotlin/a/Calls.kt")
    assert named(result, f"a.Calls.{method}")[0].outbound == (outbound,)


def test_a_java_type_whose_only_fixed_field_is_a_client_keeps_its_base() -> None:
    source = """package a;
class Only {
    private final WebClient fixed = WebClient.create("http://fixed-service/v1");
    String call() { return fixed.get().uri("/things").retrieve().bodyToMono(String.class).block(); }
}
"""
    call = named(chunk(source, "src/main/java/a/Only.java"), "a.Only.call")[0]
    assert call.outbound == ("web_client GET fixed-service /v1/things",)


def test_a_kotlin_configuration_properties_read_is_the_key_its_property_binds() -> None:
    source = """package a
class C(private val rest: RestTemplate, private val props: ClientProperties, private val other: Helper) {
    fun getter() = rest.getForObject(props.getVisitsUrl() + "/x", String::class.java)
    fun property() = rest.getForObject("${props.visitsUrl}/y", String::class.java)
    fun notProperties() = rest.getForObject("${other.visitsUrl}/z", String::class.java)
}
"""
    result = chunk(source, "src/main/kotlin/a/C.kt")
    outbound = [named(result, f"a.C.{name}")[0].outbound for name in ("getter", "property", "notProperties")]
    assert outbound == [
        ("rest_template GET ${ClientProperties.visitsUrl} /x",),
        ("rest_template GET ${ClientProperties.visitsUrl} /y",),
        ("rest_template GET - /z",),  # a type not named as `@ConfigurationProperties` classes are: code
    ]
