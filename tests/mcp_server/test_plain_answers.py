"""Answers that were wrong or silent (issue 28), over the MCP tools on two small services indexed for real.

`acme/things` serves `/things/...` and declares an entity `Thing` with a getter `getName()`; `acme/gateway`
calls it through an HTTP client that declares its own `getName(long)`, with base URLs from a field a setter
overrides, a field the constructor sets to a literal, and `@Value` properties with a literal default. Each
repository is indexed with `index_directory` (what `javakb index` runs) into an embedded in-memory Qdrant.
The Java below is written for these tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import pytest
import pytest_asyncio
from fastmcp import Client

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from app.sync.local_index import index_directory
from entry.deps import open_deps
from mcp_server.server import create_server
from tests.mcp_server.test_tools import call, data, text

pytestmark = pytest.mark.asyncio(loop_scope="module")

SRC: Final = "src/main/java/"

THINGS: Final = {
    SRC + "demo/things/ThingController.java": """\
package demo.things;

import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/things")
public class ThingController {
    @GetMapping("/{id}")
    public Thing get(@PathVariable long id) {
        return new Thing("thing " + id);
    }

    @GetMapping("/list")
    public String list(@RequestParam long id) {
        return "list";
    }

    @GetMapping("/fixed")
    public String fixed() {
        return "fixed";
    }

    @GetMapping("/configured")
    public String configured() {
        return "configured";
    }

    @GetMapping("/injected")
    public String injected() {
        return "injected";
    }
}
""",
    SRC + "demo/things/Thing.java": """\
package demo.things;

import jakarta.persistence.Entity;

@Entity
public class Thing {
    private final String name;

    public Thing(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }
}
""",
    SRC + "demo/things/Sizes.java": """\
package demo.things;

public class Sizes {
    public int hugeMethod1(int a) {
        return a * 1000;
    }

    public int hugeMethod2(int a) {
        return a * 2000;
    }

    public int smallMethod(int a) {
        return a;
    }
}
""",
    SRC + "demo/things/Parts.java": """\
package demo.things;

public class Parts {
    static class PartA {
        int count() {
            return 0;
        }
    }

    static class PartB {
        int count() {
            return 1;
        }
    }

    static class PartC {
        int count() {
            return 2;
        }
    }

    static class PartD {
        int count() {
            return 3;
        }
    }

    static class PartE {
        int count() {
            return 4;
        }
    }

    static class PartF {
        int count() {
            return 5;
        }
    }

    static class PartG {
        int count() {
            return 6;
        }
    }

    static class PartH {
        int count() {
            return 7;
        }
    }

    static class PartI {
        int count() {
            return 8;
        }
    }

    static class PartJ {
        int count() {
            return 9;
        }
    }

    static class PartK {
        int count() {
            return 10;
        }
    }
}
""",
}

GATEWAY: Final = {
    SRC + "demo/gateway/ThingsClient.java": """\
package demo.gateway;

import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.WebClient;

@Component
public class ThingsClient {
    // Tests point it elsewhere with the setter.
    private String host = "http://things-service/";

    private final WebClient.Builder builder;

    public ThingsClient(WebClient.Builder builder) {
        this.builder = builder;
    }

    public String list(long id) {
        return builder.build().get().uri(host + "things/list?id={id}", id).retrieve().bodyToMono(String.class).block();
    }

    public String getName(long id) {
        return builder.build().get().uri("http://things-service/things/{id}", id).retrieve()
            .bodyToMono(String.class).block();
    }

    void setHost(String host) {
        this.host = host;
    }
}
""",
    SRC + "demo/gateway/FixedThings.java": """\
package demo.gateway;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestTemplate;

@Component
public class FixedThings {
    private final String base;
    @Value("${things.url:http://things-service}")
    private String configured;
    private final String injected;
    private final RestTemplate restTemplate;

    public FixedThings(RestTemplate restTemplate, @Value("${things.other:http://things-service}") String injected) {
        this.restTemplate = restTemplate;
        this.base = "http://things-service";
        this.injected = injected;
    }

    public String fixed() {
        return restTemplate.getForObject(base + "/things/fixed", String.class);
    }

    public String configured() {
        return restTemplate.getForObject(configured + "/things/configured", String.class);
    }

    public String injected() {
        return restTemplate.getForObject(injected + "/things/injected", String.class);
    }
}
""",
    SRC + "demo/other/Loose.java": """\
package demo.other;

public class Loose {
    // `Thing` is not imported: the call is recorded under the type's simple name only.
    public String describe(Thing thing) {
        return thing.getName();
    }
}
""",
    SRC + "demo/gateway/Gateway.java": """\
package demo.gateway;

import demo.things.Thing;
import org.springframework.stereotype.Service;

@Service
public class Gateway {
    private final ThingsClient client;

    public Gateway(ThingsClient client) {
        this.client = client;
    }

    public String describe(Thing thing) {
        return "a " + thing.getName();
    }

    public String remote(long id) {
        return client.getName(id);
    }
}
""",
}


def written(root: Path, files: dict[str, str]) -> Path:
    for path, source in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(source, encoding="utf-8")
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deps(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Deps]:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as opened:
        for repo, files in (("acme/things", THINGS), ("acme/gateway", GATEWAY)):
            await index_directory(opened, written(tmp_path_factory.mktemp(repo.split("/")[1]), files), repo)
        yield opened


@pytest_asyncio.fixture(loop_scope="module")
async def client(deps: Deps) -> AsyncIterator[Client[Any]]:
    async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as c:
        yield c


def short(item: dict[str, Any]) -> str:
    return ".".join(str(item["qualified_name"]).split(".")[-2:])


# --- get_callers: a bare name two types declare --------------------------------------------------------------------


async def test_a_bare_name_two_types_declare_lists_the_types_and_the_callers_of_each(client: Client[Any]) -> None:
    answer = await call(client, "get_callers", name="getName")
    assert data(answer)["declared_by"] == ["demo.gateway.ThingsClient", "demo.things.Thing"]
    assert text(answer).startswith("getName is declared by 2 types, so its callers are listed per type")
    assert [(short(i), i["declared_by"], i["match"]) for i in data(answer)["results"]] == [
        ("Gateway.remote", "demo.gateway.ThingsClient", "receiver type"),
        ("Gateway.describe", "demo.things.Thing", "receiver type"),
        ("Loose.describe", "demo.things.Thing", "type name"),
    ]
    assert "calls demo.things.Thing.getName (its receiver's type resolved)" in text(answer)
    assert "calls demo.things.Thing.getName (only by the simple name of its receiver's type)" in text(answer)


async def test_a_bare_name_too_many_types_declare_names_them_and_asks_which(client: Client[Any]) -> None:
    answer = await call(client, "get_callers", name="count")
    assert data(answer)["declared_by"] == [f"demo.things.Parts.Part{c}" for c in "ABCDEFGHIJK"]
    assert data(answer)["results"] == []
    assert text(answer).startswith(
        "count is declared by 11 types, too many to list the callers of each: name one, "
        "e.g. get_callers(name='PartA.count'). The types: demo.things.Parts.PartA, "
    )


async def test_a_named_type_answers_for_that_type_alone(client: Client[Any]) -> None:
    answer = await call(client, "get_callers", name="Thing.getName")
    assert [(short(i), i["match"]) for i in data(answer)["results"]] == [
        ("Gateway.describe", "receiver type"),
        ("Loose.describe", "type name"),
    ]
    assert text(answer).startswith("Callers of Thing.getName:")
    assert text(answer).count("matched only by the simple name of its receiver's type") == 1


# --- find_endpoint: the verb in the path, a full URL --------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "method", "read"),
    [
        ("GET /things/{id}", None, "GET /things/{id} (read from 'GET /things/{id}')"),
        ("get /things/7", None, "GET /things/7 (read from 'get /things/7')"),
        (
            "http://some-service/things/7",
            None,
            "any /things/7 on some-service (read from 'http://some-service/things/7')",
        ),
        ("GET http://things-service/things/7?x=1", "GET", "GET /things/7 on things-service (read from"),
        ("/things/7", "GET", "GET /things/7:"),
    ],
)
async def test_find_endpoint_reads_a_verb_and_a_url_and_says_what_it_read(
    client: Client[Any], path: str, method: str | None, read: str
) -> None:
    answer = await call(client, "find_endpoint", path=path, http_method=method)
    assert [short(i) for i in data(answer)["results"]] == ["ThingController.get"]
    assert text(answer).startswith(f"Handlers of {read}")


async def test_a_verb_in_the_path_gives_way_to_http_method_and_says_so(client: Client[Any]) -> None:
    answer = await call(client, "find_endpoint", path="POST /things/7", http_method="GET")
    assert [short(i) for i in data(answer)["results"]] == ["ThingController.get"]
    assert "its POST gave way to http_method" in text(answer)


# --- find_endpoint_callers: base URLs from fields, unresolved candidates -----------------------------------------


@pytest.mark.parametrize(
    ("path", "caller", "reaches"),
    [
        ("/things/fixed", "FixedThings.fixed", "GET /things/fixed -> things-service (rest_template)"),
        ("/things/configured", "FixedThings.configured", "GET /things/configured -> things-service (rest_template)"),
        ("/things/injected", "FixedThings.injected", "GET /things/injected -> things-service (rest_template)"),
    ],
)
async def test_a_base_url_the_type_fixes_resolves_the_call(
    client: Client[Any], path: str, caller: str, reaches: str
) -> None:
    answer = await call(client, "find_endpoint_callers", path=path, http_method="GET")
    # `ThingsClient.getName` calls `/things/{id}`, which may be any of them: it is listed after.
    item, *others = data(answer)["results"]
    assert (short(item), item["reaches_with"]) == (caller, [reaches])
    assert [short(i) for i in others] == ["ThingsClient.getName"]
    assert all("evidence" not in i for i in data(answer)["results"])


async def test_a_base_url_a_setter_overrides_is_an_unresolved_candidate_with_its_evidence(client: Client[Any]) -> None:
    answer = await call(client, "find_endpoint_callers", path="/things/list", http_method="GET")
    fixed, item = data(answer)["results"]  # `/things/{id}` may be `/things/list`: the code fixes that call
    assert (short(fixed), short(item)) == ("ThingsClient.getName", "ThingsClient.list")
    assert item["evidence"] == [
        'unresolved: the code does not fix its URI host + "things/list?id={id}"; its literal part /things/list '
        "ends /things/list; its base defaults to things-service, which other assignments replace"
    ]
    assert "(1 whose URI the code fixes; 1 unresolved candidate, last, with evidence):" in text(answer)
    # The full URL and the verb in the path are read here too; another method is no candidate.
    same = await call(client, "find_endpoint_callers", path="GET http://things-service/things/list?id=3")
    assert [short(i) for i in data(same)["results"]] == ["ThingsClient.getName", "ThingsClient.list"]
    assert data(await call(client, "find_endpoint_callers", path="/things/list", http_method="POST"))["results"] == []


# --- a name that exists nowhere; scores -------------------------------------------------------------------------


async def test_get_symbol_of_a_name_that_exists_nowhere_says_so_then_offers_near_names(client: Client[Any]) -> None:
    answer = await client.call_tool("get_symbol", {"name": "hugeMethod5"}, raise_on_error=False)
    assert answer.is_error
    assert text(answer).startswith(
        "No symbol named 'hugeMethod5'. Near names: Sizes.hugeMethod1, Sizes.hugeMethod2. Try semantic_search"
    )
    far = await client.call_tool("get_symbol", {"name": "zzzQqq"}, raise_on_error=False)
    assert text(far).startswith("No symbol named 'zzzQqq'. No indexed name is near it.")


async def test_a_search_for_a_name_that_exists_nowhere_says_so_before_its_results(client: Client[Any]) -> None:
    answer = await call(client, "semantic_search", query="hugeMethod5")
    assert text(answer).startswith(
        "No symbol is named 'hugeMethod5'; near names: Sizes.hugeMethod1, Sizes.hugeMethod2. "
        "The results below match its words only.\nResults for 'hugeMethod5':"
    )
    assert data(answer)["missing"] == [{"name": "hugeMethod5", "near": ["Sizes.hugeMethod1", "Sizes.hugeMethod2"]}]
    named = await call(client, "semantic_search", query="hugeMethod1")
    assert text(named).startswith("Results for 'hugeMethod1':")
    assert "missing" not in data(named)


async def test_results_show_no_score_the_order_was_not_made_by(client: Client[Any]) -> None:
    for tool, arguments in (("semantic_search", {"query": "things list"}), ("get_symbol", {"name": "getName"})):
        items = data(await call(client, tool, **arguments))["results"]
        assert items
        assert all("score" not in item for item in items), tool


async def test_a_capitalised_word_or_a_name_found_is_not_called_missing(client: Client[Any]) -> None:
    for query in ("things made with Spring Boot", "Sizes.hugeMethod1", "ThingController list"):
        answer = await call(client, "semantic_search", query=query)
        assert text(answer).startswith("Results for"), query
        assert "missing" not in data(answer), query


async def test_a_call_with_an_unresolved_base_reaches_the_handler_of_its_literal_tail_as_a_candidate(
    client: Client[Any],
) -> None:
    answer = await call(client, "find_endpoint", caller="ThingsClient.list")
    [item] = data(answer)["results"]
    assert short(item) == "ThingController.list"
    assert item["evidence"] == [
        'unresolved: the code does not fix its URI host + "things/list?id={id}"; its literal part /things/list '
        "is the route",
        "method GET",
        "its base's default service things-service matches acme/things",
    ]
    assert 'GET ?host + "things/list?id={id}" -> things-service by default (web_client)' in text(answer)
