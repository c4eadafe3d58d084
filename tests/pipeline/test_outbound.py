"""Outbound HTTP calls on the calling chunk (issue 16): each client style, constants, concatenation, unresolved URIs.

The Java below is written for these tests. The calls that gate the tree reading come from the outline
(the C reader); the routes come from py-tree-sitter's tree of the same bytes, parsed when asked.
"""

from __future__ import annotations

import pytest

from pipeline.chunking import chunk_source
from pipeline.model import Chunk, ChunkerConfig, FileResult, SourceContext
from pipeline.outbound import Client, OutboundRoute, Var, decode, uri_route
from pipeline.spring import split_url
from tests.support.java import only

CLIENTS = """package demo.calls;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.http.HttpMethod;
import org.springframework.web.bind.annotation.*;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.service.annotation.*;

@FeignClient(name = "Ledger-Service", path = "/ledger")
interface LedgerClient {
    @GetMapping("/entries/{id}") Entry entry(@PathVariable("id") long id);
    @RequestMapping(value = "/entries", method = RequestMethod.POST) void add(Entry entry);
}

@FeignClient(value = "${clients.audit.name}", url = "http://audit-service:8080")
interface AuditClient {
    @PostMapping("/events") void record(Event event);
}

@HttpExchange(url = "http://catalog/api")
interface CatalogApi {
    @GetExchange("/items/{sku}") Item item(@PathVariable String sku);
    @DeleteExchange("/items/{sku}") void remove(@PathVariable String sku);
}

interface Paths {
    String ORDERS = "/orders";
}

interface OrderApi {
    @GetMapping("/orders/{id}") Order find(@PathVariable long id);
}

@Service
class Checkout {
    private static final String BILLING = "http://billing-service";
    static final String INVOICES = BILLING + "/invoices/";
    private final RestTemplate rest;
    private final RestClient restClient;
    private final WebClient webClient;
    private final java.util.Map<String, String> cache;
    private String baseUrl;

    Invoice invoice(String number) {
        return rest.getForObject(INVOICES + "{number}", Invoice.class, number);
    }

    void pay(String number) {
        rest.postForEntity(BILLING + "/payments/" + number + "/capture?async=true", null, Void.class);
    }

    void swap(String number) {
        rest.exchange("lb://shipping/shipments/" + number, HttpMethod.PUT, null, Void.class);
        cache.put(number, "done");
    }

    Order order(long id) {
        return restClient.get().uri(Paths.ORDERS + "/{id}", id).retrieve().body(Order.class);
    }

    void cancel(long id) {
        webClient.method(HttpMethod.DELETE).uri(baseUrl + "/orders/" + id).retrieve();
    }

    void ping() {
        WebClient.create("http://health-service").get().uri("/ping").retrieve();
    }

    void opaque(String url) {
        rest.getForObject(url, String.class);
        webClient.get().uri(builder -> builder.path("/x").build()).retrieve();
    }

    void local() {
        String target = "http://localhost:8080/reports/daily";
        rest.delete(target);
    }

    void none() {
        cache.get("x");
    }
}
"""


def chunk_with(source: str, config: ChunkerConfig | None = None) -> FileResult:
    context = SourceContext(repo_path="demo/repo")
    path = "src/main/java/demo/calls/All.java"
    return chunk_source(source.encode(), path, context, config or ChunkerConfig())


def routes(chunk: Chunk) -> list[str]:
    return [decode(r).describe() for r in chunk.outbound]


@pytest.fixture(scope="module")
def clients() -> FileResult:
    return chunk_with(CLIENTS)


def test_feign_methods_are_clients_of_the_service_their_annotation_names(clients: FileResult) -> None:
    assert routes(only(clients, "demo.calls.LedgerClient.entry")) == [
        "GET /ledger/entries/{id} -> ledger-service (feign)"
    ]
    assert routes(only(clients, "demo.calls.LedgerClient.add")) == ["POST /ledger/entries -> ledger-service (feign)"]
    # A placeholder name names no service: the host of `url` does (its port dropped).
    assert routes(only(clients, "demo.calls.AuditClient.record")) == ["POST /events -> audit-service (feign)"]


def test_http_interface_methods_take_the_path_and_service_of_their_type_url(clients: FileResult) -> None:
    item = only(clients, "demo.calls.CatalogApi.item")
    assert routes(item) == ["GET /api/items/{sku} -> catalog (http_exchange)"]
    assert item.http_path == ("/api/items/{sku}",)  # the scheme and host are no part of the route
    assert routes(only(clients, "demo.calls.CatalogApi.remove")) == [
        "DELETE /api/items/{sku} -> catalog (http_exchange)"
    ]


def test_an_interface_of_mappings_is_a_contract_not_a_client(clients: FileResult) -> None:
    find = only(clients, "demo.calls.OrderApi.find")
    assert find.http_path == ("/orders/{id}",) and find.outbound == ()


def test_rest_template_uris_from_constants_and_concatenation(clients: FileResult) -> None:
    assert routes(only(clients, "demo.calls.Checkout.invoice")) == [
        "GET /invoices/{number} -> billing-service (rest_template)"
    ]
    # A concatenated variable is a path variable; the query string is no part of the route.
    assert routes(only(clients, "demo.calls.Checkout.pay")) == [
        "POST /payments/{number}/capture -> billing-service (rest_template)"
    ]


def test_rest_template_exchange_takes_its_http_method_argument_and_lb_urls_name_the_service(
    clients: FileResult,
) -> None:
    # `cache.put` is a Map's, not an HTTP call.
    assert routes(only(clients, "demo.calls.Checkout.swap")) == ["PUT /shipments/{number} -> shipping (rest_template)"]


def test_fluent_clients(clients: FileResult) -> None:
    assert routes(only(clients, "demo.calls.Checkout.order")) == ["GET /orders/{id} (rest_client)"]
    # A base URL from configuration: the path is known, the service is not.
    assert routes(only(clients, "demo.calls.Checkout.cancel")) == ["DELETE /orders/{id} (web_client)"]
    assert routes(only(clients, "demo.calls.Checkout.ping")) == ["GET /ping -> health-service (web_client)"]


def test_unresolvable_uris_are_recorded_as_unresolved(clients: FileResult) -> None:
    found = [decode(r) for r in only(clients, "demo.calls.Checkout.opaque").outbound]
    assert found == [
        OutboundRoute(client=Client.REST_TEMPLATE, method="GET", service=None, path="?url"),
        OutboundRoute(
            client=Client.WEB_CLIENT, method="GET", service=None, path='?builder -> builder.path("/x").build()'
        ),
    ]
    assert not any(r.resolved for r in found)


def test_a_local_variable_resolves_and_localhost_names_no_service(clients: FileResult) -> None:
    assert routes(only(clients, "demo.calls.Checkout.local")) == ["DELETE /reports/daily (rest_template)"]


def test_methods_without_http_calls_have_none(clients: FileResult) -> None:
    assert only(clients, "demo.calls.Checkout.none").outbound == ()
    assert only(clients, "demo.calls.Checkout").outbound == ()  # a type's skeleton calls nothing


def test_a_split_method_keeps_each_call_on_its_part() -> None:
    filler = "\n".join(f"        int v{i} = {i} * {i} + {i};" for i in range(120))
    source = f"""package demo;
class Big {{
    private org.springframework.web.client.RestTemplate rest;
    void run() {{
        rest.getForObject("http://first/a", String.class);
{filler}
        rest.getForObject("http://second/b", String.class);
    }}
}}
"""
    parts = [c for c in chunk_with(source, ChunkerConfig(max_chunk_tokens=300)).chunks if c.name == "run"]
    assert len(parts) > 1
    assert [routes(p) for p in parts if p.outbound] == [
        ["GET /a -> first (rest_template)"],
        ["GET /b -> second (rest_template)"],
    ]


@pytest.mark.parametrize(
    ("url", "split"),
    [
        ("http://accounts/a/{id}", ("accounts", "/a/{id}")),
        ("https://user:pw@Accounts.svc:8443", ("accounts.svc", "/")),
        ("lb://accounts", ("accounts", "/")),
        ("http://127.0.0.1:9000/x", (None, "/x")),
        ("http://${host}/x", (None, "/x")),
        ("/relative", (None, "/relative")),
    ],
)
def test_split_url(url: str, split: tuple[str | None, str]) -> None:
    assert split_url(url) == split


def test_uri_pieces() -> None:
    assert uri_route(["/a/", Var("a.getId()"), "/b"]) == (None, "/a/{getId}/b")
    assert uri_route([Var("base"), "/x"]) == (None, "/x")
    assert uri_route([Var("base"), "x"]) is None  # not a path after the base
    assert uri_route([Var("url")]) is None
    assert uri_route(["${svc.url}/x/y"]) == ("${svc.url}", "/x/y")  # the property is the service, read at query time
    assert uri_route(["${svc.url:http://svc/api}", "/x"]) == ("${svc.url:http://svc/api}", "/api/x")
    assert uri_route(["${a:${b:http://svc}}/x"]) == ("${a:${b:http://svc}}", "/x")
    assert uri_route(["${svc.url:http://svc}/x"], None) == ("${svc.url:http://svc}", "/x")
    assert uri_route(["/x"], "${svc.url}") == ("${svc.url}", "/x")  # `WebClient.create(baseUrl)`, `@Value` field
    assert uri_route(["http://${host:svc}/x"]) == ("svc", "/x")  # inside a URL: its default
    # A `@Value` field in the path (as written since configured bases): its default, wherever the path starts.
    assert uri_route([Var("base"), "/api/${api.version:v1}/x"]) == (None, "/api/v1/x")
    assert uri_route(["${svc.url}/api/${api.version:v1}/x"]) == ("${svc.url}", "/api/v1/x")
    assert uri_route(["${svc url}/x"]) == (None, "/x")  # a space: cannot be stored as a service
    assert uri_route(["/x"], "http://base/api") == ("base", "/api/x")


def test_a_stored_route_reads_back() -> None:
    route = OutboundRoute(client=Client.WEB_CLIENT, method="GET", service=None, path="?a + b")
    assert decode(route.encode()) == route
    with pytest.raises(ValueError):
        decode("nonsense")


CONFIGURED_CLIENTS = """\
package demo.calls;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.*;
import org.springframework.boot.web.client.RestTemplateBuilder;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.service.annotation.*;

@FeignClient(name = "visits", url = "${clients.visits.url}")
interface NamedVisits {
    @GetMapping("/pets/visits")
    String visits();
}

@FeignClient(url = "${clients.visits.url}")
interface UnnamedVisits {
    @GetMapping("/pets/visits")
    String visits();
}

@HttpExchange(url = "${clients.visits.url}/v2")
interface ExchangeVisits {
    @GetExchange("/pets/visits")
    String visits();
}

class Calls {
    @Value("${clients.visits.url}")
    private String baseUrl;
    @Value("${clients.other.url:http://other/api}")
    private String other;

    private final WebClient visits;
    private final WebClient fixed = WebClient.create("http://fixed-service/v1");
    private final RestTemplate templated;

    Calls(WebClient.Builder builder, RestTemplateBuilder templates, @Value("${clients.tpl.url}") String tpl) {
        this.visits = builder.baseUrl(baseUrl).build();
        this.templated = templates.rootUri(tpl).build();
    }

    String held() {
        return visits.get().uri("/pets/visits").retrieve().bodyToMono(String.class).block();
    }

    String heldLiteral() {
        return fixed.get().uri("/things").retrieve().bodyToMono(String.class).block();
    }

    String heldTemplate() {
        return templated.getForObject("/owners", String.class);
    }

    String local() {
        WebClient client = WebClient.create(other);
        return client.get().uri("/local").retrieve().bodyToMono(String.class).block();
    }

    String created() {
        return WebClient.create(baseUrl).get().uri("/pets/visits").retrieve().bodyToMono(String.class).block();
    }

    String built() {
        return WebClient.builder().baseUrl(other).build().get().uri("/pets").retrieve().bodyToMono(String.class)
            .block();
    }
}
"""


@pytest.mark.parametrize(
    ("method", "described"),
    [
        # Feign's `url` property decides; the client's name is the host when nothing sets it (`app.search.services`).
        ("NamedVisits.visits", "GET /pets/visits -> ${clients.visits.url:http://visits} (feign)"),
        ("UnnamedVisits.visits", "GET /pets/visits -> ${clients.visits.url} (feign)"),
        # What follows the property in `@HttpExchange(url)` is the path prefix; the property is no path.
        ("ExchangeVisits.visits", "GET /v2/pets/visits -> ${clients.visits.url} (http_exchange)"),
        ("Calls.created", "GET /pets/visits -> ${clients.visits.url} (web_client)"),
        ("Calls.built", "GET /api/pets -> ${clients.other.url:http://other/api} (web_client)"),
        # A client held in a field (or a local) keeps the base it was built with.
        ("Calls.held", "GET /pets/visits -> ${clients.visits.url} (web_client)"),
        ("Calls.heldLiteral", "GET /v1/things -> fixed-service (web_client)"),
        ("Calls.heldTemplate", "GET /owners -> ${clients.tpl.url} (rest_template)"),
        ("Calls.local", "GET /api/local -> ${clients.other.url:http://other/api} (web_client)"),
    ],
)
def test_a_base_url_from_a_property_is_stored_as_its_placeholder(method: str, described: str) -> None:
    assert routes(only(chunk_with(CONFIGURED_CLIENTS), f"demo.calls.{method}")) == [described]
