"""Cross-service links through the whole sync (issue 16): pushes to the fake GitLab, the worker, the store.

Service `acme/accounts` serves `/accounts/...`; `acme/statistics` calls it through a Feign client and a
RestTemplate; `acme/legacy` serves the same GET route too, so a call is ambiguous and both handlers are
listed with their evidence. A reader of `acme/accounts` alone sees none of the statistics call sites.
The Java below is written for these tests.
"""

from __future__ import annotations

from typing import Final

from app.auth.access import LOCAL, Access
from app.search.links import EndpointLinks
from pipeline.outbound import decode
from testkit.sync_env import SyncEnv

SRC: Final = "src/main/java/"

ACCOUNTS: Final = {
    SRC + "demo/accounts/AccountController.java": """\
package demo.accounts;

import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/accounts")
public class AccountController {
    @GetMapping("/{name}")
    public Account getAccount(@PathVariable String name) {
        return new Account(name);
    }

    @PutMapping("/current")
    public void saveCurrent(@RequestBody Account account) {
    }
}
""",
}

LEGACY: Final = {
    SRC + "demo/legacy/OldAccounts.java": """\
package demo.legacy;

import org.springframework.web.bind.annotation.*;

@RestController
public class OldAccounts {
    @GetMapping("/accounts/{id}")
    public String find(@PathVariable String id) {
        return id;
    }
}
""",
}

STATISTICS: Final = {
    SRC + "demo/stats/AccountClient.java": """\
package demo.stats;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.*;

@FeignClient(name = "accounts")
public interface AccountClient {
    @GetMapping("/accounts/{accountName}")
    Account getAccount(@PathVariable("accountName") String accountName);
}
""",
    SRC + "demo/stats/StatisticsService.java": """\
package demo.stats;

import org.springframework.stereotype.Service;
import org.springframework.web.client.RestTemplate;

@Service
public class StatisticsService {
    private static final String ACCOUNTS = "http://accounts/accounts";
    private final AccountClient accountClient;
    private final RestTemplate restTemplate;

    public StatisticsService(AccountClient accountClient, RestTemplate restTemplate) {
        this.accountClient = accountClient;
        this.restTemplate = restTemplate;
    }

    public void refresh(String name) {
        Account account = accountClient.getAccount(name);
    }

    public void publish(Account account) {
        restTemplate.put(ACCOUNTS + "/current", account);
    }

    public String elsewhere(String url) {
        return restTemplate.getForObject(url, String.class);
    }
}
""",
}


async def index_three_services(env: SyncEnv) -> dict[str, int]:
    ids = {}
    for repo, files in (("acme/accounts", ACCOUNTS), ("acme/legacy", LEGACY), ("acme/statistics", STATISTICS)):
        project = env.gitlab.create_project(repo)
        await env.push(project, dict(files))
        ids[repo] = project.id
    await env.work()
    return ids


def short(name: str) -> str:
    return ".".join(name.split(".")[-2:])


async def test_callers_of_an_endpoint_are_the_feign_client_its_callers_and_rest_template_calls(env: SyncEnv) -> None:
    await index_three_services(env)
    links = EndpointLinks(env.deps.search)

    get = await links.callers(LOCAL, "/accounts/demo", "GET")
    assert [(short(s.hit.qualified_name), s.hit.repo_path) for s in get] == [
        ("AccountClient.getAccount", "acme/statistics"),
        ("StatisticsService.refresh", "acme/statistics"),
    ]
    assert get[1].through is not None and short(get[1].through.qualified_name) == "AccountClient.getAccount"
    assert [r.describe() for r in get[0].routes] == ["GET /accounts/{accountName} -> accounts (feign)"]

    # Any method: the PUT made with RestTemplate too (its URI from a constant and a concatenation).
    anything = await links.callers(LOCAL, "/accounts/current")
    assert {short(s.hit.qualified_name) for s in anything} == {
        "AccountClient.getAccount",
        "StatisticsService.refresh",
        "StatisticsService.publish",
    }
    assert await links.callers(LOCAL, "/accounts/current", "DELETE") == []
    assert await links.callers(LOCAL, "/accounts/demo", "GET", repo="acme/accounts") == []


async def test_a_call_site_reaches_the_handlers_in_other_services_with_the_evidence(env: SyncEnv) -> None:
    await index_three_services(env)
    links = EndpointLinks(env.deps.search)

    found = await links.targets(LOCAL, "StatisticsService.refresh")  # calls the Feign client
    assert [(short(t.hit.qualified_name), t.hit.repo_path, t.service_match) for t in found.targets] == [
        ("AccountController.getAccount", "acme/accounts", True),  # the service the client names comes first
        ("OldAccounts.find", "acme/legacy", False),  # the same route elsewhere: listed, not hidden
    ]
    first, second = found.targets
    assert "service accounts matches acme/accounts" in first.evidence
    assert "path /accounts/{accountName} matches /accounts/{name}" in first.evidence
    assert "service accounts does not match acme/legacy" in second.evidence

    put = await links.targets(LOCAL, "StatisticsService.publish")
    assert [short(t.hit.qualified_name) for t in put.targets] == ["AccountController.saveCurrent"]

    opaque = await links.targets(LOCAL, "StatisticsService.elsewhere")
    assert opaque.targets == [] and opaque.calls == 1
    assert [r.path for _, r in opaque.unresolved] == ["?url"]


async def test_a_reader_who_cannot_read_the_caller_sees_no_call_site(env: SyncEnv) -> None:
    ids = await index_three_services(env)
    links = EndpointLinks(env.deps.search)
    accounts_only = Access(subject="a", project_ids=frozenset({ids["acme/accounts"]}))
    both = Access(subject="b", project_ids=frozenset({ids["acme/accounts"], ids["acme/statistics"]}))

    assert await links.callers(accounts_only, "/accounts/demo", "GET") == []
    assert (await links.targets(accounts_only, "StatisticsService.refresh")).calls == 0
    assert len(await links.callers(both, "/accounts/demo", "GET")) == 2
    # The handlers a caller may not read are not listed either.
    reached = await links.targets(both, "StatisticsService.refresh")
    assert [t.hit.repo_path for t in reached.targets] == ["acme/accounts"]


async def test_the_stored_points_carry_the_outbound_routes_and_their_keys(env: SyncEnv) -> None:
    ids = await index_three_services(env)
    points = await env.points(ids["acme/statistics"])
    publish = next(p for p in points.values() if p["qualified_name"] == "demo.stats.StatisticsService.publish")
    assert [decode(r).describe() for r in publish["outbound"]] == ["PUT /accounts/current -> accounts (rest_template)"]
    assert publish["outbound_keys"] == ["2:accounts"]
    elsewhere = next(p for p in points.values() if p["qualified_name"] == "demo.stats.StatisticsService.elsewhere")
    assert elsewhere["outbound"] == ["rest_template GET - ?url"] and elsewhere["outbound_keys"] == []


async def test_a_context_path_is_assumed_only_within_the_service_the_call_names(env: SyncEnv) -> None:
    billing = env.gitlab.create_project("acme/billing-service")
    await env.push(
        billing,
        {
            SRC + "demo/billing/Invoices.java": """\
package demo.billing;

import org.springframework.web.bind.annotation.*;

@RestController
public class Invoices {
    @GetMapping("/{id}")
    public String invoice(@PathVariable String id) {
        return id;
    }
}
""",
        },
    )
    other = env.gitlab.create_project("acme/other")
    await env.push(other, {SRC + "demo/other/Any.java": LEGACY[SRC + "demo/legacy/OldAccounts.java"]})
    caller = env.gitlab.create_project("acme/caller")
    await env.push(
        caller,
        {
            SRC + "demo/caller/BillingClient.java": """\
package demo.caller;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.*;

@FeignClient(name = "billing-service")
public interface BillingClient {
    @GetMapping("/billing/{id}")
    String invoice(@PathVariable("id") String id);
}
""",
        },
    )
    await env.work()
    found = await EndpointLinks(env.deps.search).targets(LOCAL, "BillingClient.invoice")
    # `/billing/{id}` is served by nobody as written; billing-service's `/{id}` under a context path `/billing`.
    assert [(t.hit.repo_path, t.service_match) for t in found.targets] == [("acme/billing-service", True)]
    assert "under the context path /billing" in found.targets[0].evidence[0]
