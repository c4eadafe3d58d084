"""Cross-service links through configuration (issue 29): base URLs in properties, context paths, config repositories.

Over the whole sync (fake GitLab, worker, store): `acme/visits` serves `/pets/visits` under the context path
its own `application.yml` sets, and names itself `visits-service`; `acme/gateway` calls it through a
`@Value` base URL, a Feign client whose `url` is a property, and an `@HttpExchange` interface, each base
URL set in the gateway's configuration (a profile overriding one). `acme/config-repo` is a Spring Cloud
Config repository: its `accounts-service.yml` sets the context path of `acme/accounts`. The Java and YAML
below are written for these tests.
"""

from __future__ import annotations

from typing import Final

from app.auth.access import LOCAL, Access
from app.search.hits import Hit
from app.search.links import EndpointLinks
from pipeline.outbound import OutboundRoute, decode
from testkit.sync_env import SyncEnv

SRC: Final = "src/main/java/"
RES: Final = "src/main/resources/"

VISITS: Final = {
    RES + "application.yml": """\
spring:
  application:
    name: visits-service
server:
  servlet:
    context-path: /visits-api
""",
    SRC + "demo/visits/VisitResource.java": """\
package demo.visits;

import org.springframework.web.bind.annotation.*;

@RestController
public class VisitResource {
    @GetMapping("/pets/visits")
    public String visits(@RequestParam String petId) {
        return petId;
    }
}
""",
}

GATEWAY: Final = {
    RES + "application.yml": """\
visits:
  host: visits-service
  base-url: http://${visits.host}:8080/visits-api
clients:
  visits:
    url: lb://gw:s3cret@visits-service/visits-api
  exchange: http://visits-service/visits-api
  password: hunter2
---
spring:
  config:
    activate:
      on-profile: docker
visits:
  base-url: http://elsewhere:8080
""",
    SRC + "demo/gateway/VisitsCaller.java": """\
package demo.gateway;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestTemplate;

@Component
public class VisitsCaller {
    @Value("${visits.base-url}")
    private String baseUrl;
    @Value("${missing.url:http://visits-service/visits-api}")
    private String withDefault;
    @Value("${nowhere.url}")
    private String nowhere;
    private final RestTemplate restTemplate;

    public VisitsCaller(RestTemplate restTemplate) {
        this.restTemplate = restTemplate;
    }

    public String visits(String petId) {
        return restTemplate.getForObject(baseUrl + "/pets/visits?petId=" + petId, String.class);
    }

    public String byDefault(String petId) {
        return restTemplate.getForObject(withDefault + "/pets/visits", String.class);
    }

    public String unset(String petId) {
        return restTemplate.getForObject(nowhere + "/pets/visits", String.class);
    }
}
""",
    SRC + "demo/gateway/VisitsClient.java": """\
package demo.gateway;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.*;

@FeignClient(name = "visits", url = "${clients.visits.url}")
public interface VisitsClient {
    @GetMapping("/pets/visits")
    String visits(@RequestParam("petId") String petId);
}
""",
    SRC + "demo/gateway/VisitsExchange.java": """\
package demo.gateway;

import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.service.annotation.GetExchange;
import org.springframework.web.service.annotation.HttpExchange;

@HttpExchange(url = "${clients.exchange}")
public interface VisitsExchange {
    @GetExchange("/pets/visits")
    String visits(@RequestParam("petId") String petId);
}
""",
}


def routes_of(hit: Hit) -> list[OutboundRoute]:
    return [decode(text) for text in hit.chunk.outbound]


def short(name: str) -> str:
    return ".".join(name.split(".")[-2:])


async def index(env: SyncEnv, projects: dict[str, dict[str, str]]) -> dict[str, int]:
    ids = {}
    for repo, files in projects.items():
        project = env.gitlab.create_project(repo)
        await env.push(project, dict(files))
        ids[repo] = project.id
    await env.work()
    return ids


async def test_a_base_url_set_in_configuration_links_the_call_to_the_service_it_names(env: SyncEnv) -> None:
    await index(env, {"acme/visits": VISITS, "acme/gateway": GATEWAY})
    links = EndpointLinks(env.deps.search)

    found = await links.targets(LOCAL, "VisitsCaller.visits")
    assert [(short(t.hit.qualified_name), t.service_match) for t in found.targets] == [("VisitResource.visits", True)]
    evidence = found.targets[0].evidence
    # The default profile's value, its `${visits.host}` resolved once, with the key, file, line and profile.
    assert evidence[0] == (
        "base URL from visits.base-url = http://${visits.host}:8080/visits-api"
        f" (acme/gateway:{RES}application.yml:3, profile default);"
        f" ${{visits.host}} from visits.host = visits-service (acme/gateway:{RES}application.yml:2, profile default)"
    )
    assert "path /visits-api/pets/visits matches /pets/visits under the context path /visits-api" in evidence[1]
    assert f"server.servlet.context-path = /visits-api (acme/visits:{RES}application.yml:6" in evidence[1]
    # The name the target's configuration gives it, not its repository's, matched the call's service.
    assert "service visits-service matches acme/visits" in evidence

    for client in ("VisitsClient.visits", "VisitsExchange.visits"):
        reached = await links.targets(LOCAL, client)
        assert [short(t.hit.qualified_name) for t in reached.targets] == ["VisitResource.visits"], client
        assert reached.targets[0].service_match
    feign = (await links.targets(LOCAL, "VisitsClient.visits")).targets[0].evidence[0]
    # A URL's password is masked where it is stored, so in the evidence too.
    assert feign.startswith("base URL from clients.visits.url = lb://gw:<secret>@visits-service/visits-api")


async def test_without_a_setting_the_default_counts_and_says_so_and_no_default_names_no_service(env: SyncEnv) -> None:
    await index(env, {"acme/visits": VISITS, "acme/gateway": GATEWAY})
    links = EndpointLinks(env.deps.search)

    by_default = await links.targets(LOCAL, "VisitsCaller.byDefault")
    assert [t.service_match for t in by_default.targets] == [True]
    assert by_default.targets[0].evidence[0] == (
        "base URL: missing.url is set in no configuration the caller may read; its default"
        " http://visits-service/visits-api"
    )
    unset = await links.targets(LOCAL, "VisitsCaller.unset")
    assert (
        unset.targets[0]
        .evidence[0]
        .endswith("nowhere.url is set in no configuration the caller may read, and has no default")
    )
    assert not unset.targets[0].service_match  # `/pets/visits` as written: found, but no service named


async def test_a_reader_of_the_caller_alone_sees_no_setting_of_another_project(env: SyncEnv) -> None:
    ids = await index(env, {"acme/visits": VISITS, "acme/gateway": GATEWAY})
    gateway_only = Access(subject="g", project_ids=frozenset({ids["acme/gateway"]}))
    found = await EndpointLinks(env.deps.search).targets(gateway_only, "VisitsCaller.visits")
    assert found.targets == [] and found.calls == 1  # the handler is not readable; nothing of it is said


CONFIG_REPO: Final = {
    "config-repo/accounts-service.yml": """\
server:
  servlet:
    context-path: /accounts
""",
    "config-repo/accounts-service-docker.yml": "server.port: 9000\n",
    "config-repo/application.yml": "clients.token: abc123\n",
}

ACCOUNTS: Final = {
    RES + "bootstrap.yml": "spring.application.name: accounts-service\n",
    SRC + "demo/accounts/AccountController.java": """\
package demo.accounts;

import org.springframework.web.bind.annotation.*;

@RestController
public class AccountController {
    @GetMapping("/{name}")
    public String account(@PathVariable String name) {
        return name;
    }
}
""",
}

STATISTICS: Final = {
    SRC + "demo/stats/AccountsClient.java": """\
package demo.stats;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.*;

@FeignClient(name = "accounts-service")
public interface AccountsClient {
    @GetMapping("/accounts/{name}")
    String account(@PathVariable("name") String name);
}
""",
}


async def test_a_config_repository_sets_the_context_path_of_the_application_its_file_names(env: SyncEnv) -> None:
    ids = await index(env, {"acme/config-repo": CONFIG_REPO, "acme/accounts": ACCOUNTS, "acme/statistics": STATISTICS})
    points = await env.points(ids["acme/config-repo"])
    chunks = {(p["file_path"], p["qualified_name"]): p for p in points.values()}
    server = chunks[("config-repo/accounts-service.yml", "server")]
    assert server["enclosing_type"] == "accounts-service"
    assert server["signature"] == "accounts-service.yml (application accounts-service)"
    assert chunks[("config-repo/accounts-service-docker.yml", "server[docker]")]["enclosing_type"] == "accounts-service"
    assert "abc123" not in str(points) and "<secret>" in chunks[("config-repo/application.yml", "clients")]["code"]

    # find_endpoint: `/accounts/demo` is the `/{name}` of the application the config repository's file names.
    handlers = await env.deps.search.endpoint(LOCAL, "/accounts/demo", "GET")
    assert {short(h.qualified_name) for h in handlers} == {"AccountController.account", "AccountsClient.account"}

    found = await EndpointLinks(env.deps.search).targets(LOCAL, "AccountsClient.account")
    assert [(short(t.hit.qualified_name), t.service_match) for t in found.targets] == [
        ("AccountController.account", True)
    ]
    assert found.targets[0].evidence[0] == (
        "path /accounts/{name} matches /{name} under the context path /accounts (server.servlet.context-path ="
        " /accounts (acme/config-repo:config-repo/accounts-service.yml:3, profile default))"
    )


CALLER: Final = """\
package demo.{module};

import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.client.RestTemplate;

public class Caller {{
    @Value("${{visits.base-url}}")
    private String baseUrl;
    private RestTemplate restTemplate;

    public String visits() {{
        return restTemplate.getForObject(baseUrl + "/pets/visits", String.class);
    }}
}}
"""


async def test_the_setting_of_the_callers_own_application_counts_first_then_the_default_profile(env: SyncEnv) -> None:
    two = {
        # Module `one` sets the key itself, a profile first in the file: the default profile's value counts.
        f"one/{RES}application.yml": "visits.base-url: http://one-visits\n---\n"
        "spring.config.activate.on-profile: dev\nvisits.base-url: http://dev-visits\n",
        f"one/{SRC}demo/one/Caller.java": CALLER.format(module="one"),
        # Module `two` sets nothing but its name: the config repository's file for that name counts.
        f"two/{RES}bootstrap.yml": "spring.application.name: two-app\n",
        f"two/{SRC}demo/two/Caller.java": CALLER.format(module="two"),
        # Module `three` has no setting of its own nor a file named for it: the shared `application.yml`.
        f"three/{SRC}demo/three/Caller.java": CALLER.format(module="three"),
    }
    repo = {
        "config-repo/two-app.yml": "visits.base-url: http://two-visits\n",
        "config-repo/application.yml": "visits.base-url: http://shared-visits\n",
    }
    await index(env, {"acme/callers": two, "acme/config": repo})
    found = await EndpointLinks(env.deps.search).targets(LOCAL, "demo.one.Caller.visits")
    assert found.targets == [] and found.calls == 1  # nothing serves it here; the call is resolved all the same
    known = await env.deps.search.configured(LOCAL, [])
    assert known.names == {("acme/callers", "two/"): {"two-app"}}
    for module, value, where in (
        ("one", "http://one-visits", f"acme/callers:one/{RES}application.yml:1, profile default"),
        ("two", "http://two-visits", "acme/config:config-repo/two-app.yml:1, profile default"),
        ("three", "http://shared-visits", "acme/config:config-repo/application.yml:1, profile default"),
    ):
        callers = await env.deps.search.symbol(LOCAL, f"demo.{module}.Caller.visits")
        route = next(iter(routes_of(callers[0])))
        configured = await env.deps.search.configured(LOCAL, [route])
        resolved, evidence = configured.resolve(route, callers[0])
        assert (resolved.service, resolved.path) == (value.removeprefix("http://"), "/pets/visits"), module
        assert evidence == (f"base URL from visits.base-url = {value} ({where})",), module


PROPERTIES_CALLER: Final = {
    RES + "application.properties": "clients.visits-url=http://visits-service/visits-api\n",
    SRC + "demo/props/ClientProperties.java": """\
package demo.props;

import org.springframework.boot.context.properties.ConfigurationProperties;

@ConfigurationProperties(prefix = "clients")
public class ClientProperties {
    private String visitsUrl;

    public String getVisitsUrl() {
        return visitsUrl;
    }
}
""",
    SRC + "demo/props/PropsCaller.java": """\
package demo.props;

import org.springframework.web.client.RestTemplate;

public class PropsCaller {
    private final ClientProperties props;
    private final RestTemplate rest;

    public PropsCaller(ClientProperties props, RestTemplate rest) {
        this.props = props;
        this.rest = rest;
    }

    public String visits() {
        return rest.getForObject(props.getVisitsUrl() + "/pets/visits", String.class);
    }
}
""",
}


async def test_a_configuration_properties_field_holding_the_url_links_through_its_bound_key(env: SyncEnv) -> None:
    await index(env, {"acme/visits": VISITS, "acme/props": PROPERTIES_CALLER})
    caller = (await env.deps.search.symbol(LOCAL, "PropsCaller.visits"))[0]
    assert [r.describe() for r in routes_of(caller)] == [
        "GET /pets/visits -> ${ClientProperties.visitsUrl} (rest_template)"
    ]
    found = await EndpointLinks(env.deps.search).targets(LOCAL, "PropsCaller.visits")
    assert [(short(t.hit.qualified_name), t.service_match) for t in found.targets] == [("VisitResource.visits", True)]
    assert found.targets[0].evidence[0] == (
        "base URL from ClientProperties.visitsUrl, bound to clients.visits-url = http://visits-service/visits-api"
        f" (acme/props:{RES}application.properties:1, profile default)"
    )
