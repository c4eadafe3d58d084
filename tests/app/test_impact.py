"""`impact` and `read_code` (issue 28) through the whole sync: the fake GitLab (real git), the worker, the store.

The three services of `test_cross_service.py`: `acme/accounts` serves `/accounts/...`, `acme/statistics`
calls it through a Feign client and a RestTemplate, `acme/legacy` serves the same GET route. A reader of
`acme/accounts` alone sees no statistics call site: no impact path through code it may not read.
"""

from __future__ import annotations

from typing import Final

from app.auth.access import LOCAL, Access
from app.gitlab.files import file_reader
from app.search.code import MAX_FILE_BYTES
from app.search.impact import Change, impact, seeds_of_changes, seeds_of_symbol
from testkit.sync_env import SyncEnv
from tests.app.test_cross_service import ACCOUNTS, SRC, index_three_services, short

CONTROLLER: Final = SRC + "demo/accounts/AccountController.java"


async def test_impact_of_a_handler_reaches_the_call_sites_in_other_services_with_paths(env: SyncEnv) -> None:
    await index_three_services(env)
    search = env.deps.search
    seeds = await seeds_of_symbol(search, LOCAL, "AccountController.getAccount", None)
    found = await impact(search, LOCAL, seeds, hops=3)

    assert [short(s.qualified_name) for s in found.seeds] == ["AccountController.getAccount"]
    assert [(e.method, e.route) for e in found.endpoints] == [("GET", "/accounts/{name}")]
    remote = [(short(r.site.qualified_name), r.site.repo_path, r.through is not None) for r in found.remote]
    assert remote == [
        ("AccountClient.getAccount", "acme/statistics", False),
        ("StatisticsService.refresh", "acme/statistics", True),
    ]
    assert found.cut == ()


async def test_impact_never_runs_through_code_the_caller_may_not_read(env: SyncEnv) -> None:
    ids = await index_three_services(env)
    search = env.deps.search
    accounts_only = Access(subject="a", project_ids=frozenset({ids["acme/accounts"]}))
    both = Access(subject="b", project_ids=frozenset({ids["acme/accounts"], ids["acme/statistics"]}))
    statistics_only = Access(subject="s", project_ids=frozenset({ids["acme/statistics"]}))

    for access, sites in ((accounts_only, 0), (both, 2)):
        seeds = await seeds_of_symbol(search, access, "AccountController.getAccount", None)
        found = await impact(search, access, seeds, hops=3)
        assert len(found.remote) == sites
        assert {r.site.repo_path for r in found.remote} <= {"acme/statistics"}
    # Who cannot read the handler has nothing to start from; a change in its files is unmatched.
    assert await seeds_of_symbol(search, statistics_only, "AccountController.getAccount", None) == []
    seeds, unmatched = await seeds_of_changes(search, statistics_only, "acme/accounts", [Change(CONTROLLER, 1, 99)])
    assert seeds == [] and unmatched == [f"{CONTROLLER}:1-99"]


async def test_impact_of_changed_lines_and_its_bounds(env: SyncEnv) -> None:
    await index_three_services(env)
    search = env.deps.search
    seeds, unmatched = await seeds_of_changes(search, LOCAL, "acme/accounts", [Change.parse(f"{CONTROLLER}:10-10")])
    assert [short(s.qualified_name) for s in seeds] == ["AccountController.getAccount"] and unmatched == []

    capped = await impact(search, LOCAL, seeds, hops=3, time_s=0.0)
    assert "time cap (0 s)" in capped.cut


async def test_read_code_reads_the_file_at_the_indexed_commit_from_gitlab(env: SyncEnv) -> None:
    ids = await index_three_services(env)
    reader = env.deps.search.within(env.deps.search.scope)
    source = file_reader(env.deps.http, env.settings.gitlab, "local", None, max_bytes=MAX_FILE_BYTES)
    assert source is not None

    page = await reader.read_code(LOCAL, "acme/accounts", CONTROLLER, None, None, source)
    assert page is not None
    assert page.origin == "gitlab" and page.project_id == ids["acme/accounts"] and page.commit_sha
    assert list(page.lines) == ACCOUNTS[CONTROLLER].splitlines()
    assert page.total_lines == len(page.lines) and page.next_start is None
    assert page.lines[0] == "package demo.accounts;"  # a line no member's chunk holds
    assert [short(s.qualified_name) for s in page.symbols][:2] == [
        "accounts.AccountController",
        "AccountController.getAccount",
    ]

    narrow = await reader.read_code(LOCAL, "acme/accounts", CONTROLLER, 8, 10, source)
    assert narrow is not None and list(narrow.lines) == ACCOUNTS[CONTROLLER].splitlines()[7:10]
    assert narrow.origin == "index" and narrow.next_start == 11  # one method's lines: the index holds them
    imports = await reader.read_code(LOCAL, "acme/accounts", CONTROLLER, 1, 4, source)
    assert imports is not None and imports.origin == "gitlab" and imports.next_start == 5


async def test_read_code_answers_an_unreadable_file_as_a_missing_one_and_asks_gitlab_nothing(env: SyncEnv) -> None:
    ids = await index_three_services(env)
    asked: list[tuple[int, str, str]] = []

    async def source(project_id: int, path: str, sha: str) -> bytes | None:
        asked.append((project_id, path, sha))
        return None

    other = Access(subject="user:9", project_ids=frozenset({ids["acme/statistics"]}))
    search = env.deps.search
    assert await search.read_code(other, "acme/accounts", CONTROLLER, None, None, source) is None
    assert await search.read_code(other, "acme/nothing", CONTROLLER, None, None, source) is None
    assert asked == []
    # GitLab refusing the caller's own token: the lines the index holds, marked as such.
    page = await search.read_code(LOCAL, "acme/accounts", CONTROLLER, None, None, source)
    assert page is not None and page.origin == "index" and asked
