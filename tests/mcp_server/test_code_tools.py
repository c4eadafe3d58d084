"""`read_code` and `impact` (issue 28) over the in-memory transport, on the `shop` fixture indexed as in
`test_tools.py` (a local checkout: no GitLab, so `read_code` shows the lines the index holds).

Over GitLab, as each identity, with permissions: `tests/mcp_server/test_access.py`.
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from app.auth.access import LOCAL
from app.runtime import Deps
from app.search.code import MAX_LINES
from app.search.frontier import frontier_keys
from app.search.scoping import Filters
from pipeline.model import TYPE_SYMBOLS
from tests.mcp_server import test_tools
from tests.mcp_server.test_tools import OWNER_SERVICE, REPO, call, data, text
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import short

UP: Final = "/".join(["..", ".."]) + "/"
"""`../../`, a path that climbs out, joined so that tests/support/test_self_contained.py reads no path here."""


deps = test_tools.deps  # the module's fixtures: its own index of the `shop` fixture and a client on it
client = test_tools.client
pytestmark = pytest.mark.asyncio(loop_scope="module")

SOURCE: Final = (SHOP_DIR / OWNER_SERVICE).read_text(encoding="utf-8").splitlines()


async def test_read_code_shows_the_indexed_lines_of_a_file_numbered_with_its_declarations(
    client: Client[Any],
) -> None:
    answer = await call(client, "read_code", repo=REPO, path=OWNER_SERVICE)
    page = data(answer)

    assert (page["repo_path"], page["file_path"], page["origin"], page["start_line"]) == (
        REPO,
        OWNER_SERVICE,
        "index",
        1,
    )
    held = [(n, line) for n, line in enumerate(page["lines"], 1) if line is not None]
    assert held and all(line == SOURCE[n - 1] for n, line in held)
    assert page["lines"][0] is None  # `package ...;`: no member's chunk holds it (a type's chunk is a skeleton)
    assert page["next_start"] is None
    names = [short(s["qualified_name"]) for s in page["results"]]
    assert "OwnerService" in names and "OwnerService.find" in names
    body = text(answer)
    assert body.startswith(f"{REPO}:{OWNER_SERVICE} @ - lines 1-") and "(from index)" in body
    first = held[0][0]
    assert f"{first:>5}  {SOURCE[first - 1]}" in body
    assert "[not held by the index]" in body and "```java" in body


async def test_read_code_pages_and_caps_a_range(client: Client[Any]) -> None:
    whole = data(await call(client, "read_code", repo=REPO, path=OWNER_SERVICE))["lines"]
    middle = data(await call(client, "read_code", repo=REPO, path=OWNER_SERVICE, start_line=20, end_line=29))

    assert (middle["start_line"], middle["end_line"], middle["lines"]) == (20, 29, whole[19:29])
    assert all(s["line_start"] <= 29 and s["line_end"] >= 20 for s in middle["results"])
    huge = data(await call(client, "read_code", repo=REPO, path=OWNER_SERVICE, start_line=1, end_line=10**9))
    assert len(huge["lines"]) <= MAX_LINES and huge["lines"] == whole


@pytest.mark.parametrize(
    "path", [UP + "etc/passwd", "/etc/passwd", "shop-core/../../../etc/passwd", "a\\..\\b.java", "a\x00b", " "]
)
async def test_read_code_refuses_a_path_that_names_no_file_of_a_repository(client: Client[Any], path: str) -> None:
    with pytest.raises(ToolError, match="file path"):
        await client.call_tool("read_code", {"repo": REPO, "path": path})


async def test_read_code_refuses_an_impossible_range(client: Client[Any]) -> None:
    with pytest.raises(ToolError, match="end_line is before start_line"):
        await client.call_tool("read_code", {"repo": REPO, "path": OWNER_SERVICE, "start_line": 9, "end_line": 3})
    with pytest.raises(ToolError):
        await client.call_tool("read_code", {"repo": REPO, "path": OWNER_SERVICE, "start_line": 0})


async def test_read_code_of_an_unknown_repository_or_file_is_the_same_miss(client: Client[Any]) -> None:
    with pytest.raises(ToolError) as unknown_repo:
        await client.call_tool("read_code", {"repo": "no/such-repo", "path": OWNER_SERVICE})
    with pytest.raises(ToolError) as unknown_file:
        await client.call_tool("read_code", {"repo": REPO, "path": "shop-core/Nope.java"})

    assert str(unknown_repo.value) == f"No indexed file {OWNER_SERVICE!r} in 'no/such-repo'."
    assert str(unknown_file.value) == f"No indexed file 'shop-core/Nope.java' in {REPO!r}."


async def test_impact_of_a_method_lists_its_callers_the_endpoints_they_serve_with_paths(client: Client[Any]) -> None:
    answer = await call(client, "impact", symbol="OwnerService.create", hops=1)
    found = data(answer)

    assert [short(s["qualified_name"]) for s in found["seeds"]] == ["OwnerService.create"]
    hop1 = {short(m["qualified_name"]) for m in found["results"]}
    assert hop1 == {
        "OwnerController.createOwner",
        "LegacyOwnerController.processCreationForm",
        "OwnerEventListener.onOwnerEvent",
        "OwnerService.upsert",
    }
    assert all(
        m["hop"] == 1 and len(m["path"]) == 2 and short(m["path"][0]) == "OwnerService.create" for m in found["results"]
    )
    routes = {(e["http_method"], e["route"]) for e in found["endpoints"]}
    assert {("POST", "/api/owners"), ("POST", "/legacy/owners/new"), ("POST", "/old/owners/new")} <= routes
    assert found["cut"] == ["hop cap (1 hops)"] or found["cut"] == []
    assert "[hop 1]" in text(answer) and "[endpoint] POST /api/owners" in text(answer)


async def test_impact_follows_more_hops_without_listing_a_method_twice(client: Client[Any]) -> None:
    one = data(await call(client, "impact", symbol="OwnerService.create", hops=1))
    three = data(await call(client, "impact", symbol="OwnerService.create", hops=3))
    none = data(await call(client, "impact", symbol="OwnerService.create", hops=0))

    keys = [(m["repo_path"], m["qualified_name"], m["signature"]) for m in three["results"]]
    assert len(keys) == len(set(keys))
    assert {m["qualified_name"] for m in one["results"]} <= {m["qualified_name"] for m in three["results"]}
    assert all(len(m["path"]) == m["hop"] + 1 for m in three["results"])
    assert none["results"] == [] and none["seeds"]


async def test_impact_of_changed_lines_starts_from_the_methods_they_touch(client: Client[Any]) -> None:
    symbols = data(await call(client, "read_code", repo=REPO, path=OWNER_SERVICE))["results"]
    create = next(s for s in symbols if short(s["qualified_name"]) == "OwnerService.create")
    change = f"{OWNER_SERVICE}:{create['line_end'] - 1}-{create['line_end']}"
    found = data(await call(client, "impact", repo=REPO, changes=[change, f"{OWNER_SERVICE}:1-1"], hops=1))

    assert [short(s["qualified_name"]) for s in found["seeds"]] == ["OwnerService.create"]
    assert found["unmatched"] == [f"{OWNER_SERVICE}:1-1"]
    assert "OwnerController.createOwner" in {short(m["qualified_name"]) for m in found["results"]}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Give a symbol"),
        ({"symbol": "OwnerService.create", "changes": ["a.java:1-2"]}, "Give a symbol"),
        ({"changes": [f"{OWNER_SERVICE}:3-4"]}, "changes need the repository"),
        ({"repo": REPO, "changes": [UP + "etc/passwd:1-3"]}, "file path"),
        ({"repo": REPO, "changes": [f"{OWNER_SERVICE}:9-3"]}, "bad line range"),
        ({"symbol": "NoSuchType.nothing"}, "No method named"),
        ({"repo": "no/such-repo", "changes": [f"{OWNER_SERVICE}:3-4"]}, "No indexed method in 'no/such-repo'"),
    ],
)
async def test_impact_refuses_bad_input(client: Client[Any], arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        await client.call_tool("impact", arguments)


async def test_impact_refuses_more_hops_than_its_cap(client: Client[Any]) -> None:
    with pytest.raises(ToolError):
        await client.call_tool("impact", {"symbol": "OwnerService.create", "hops": 1000})


async def test_a_frontier_s_shared_walk_gives_each_method_the_keys_get_callers_uses(deps: Deps) -> None:
    search = deps.search
    methods = sorted(
        {h.qualified_name for h in await search.lookup(LOCAL, Filters()) if h.symbol_type not in TYPE_SYMBOLS}
    )
    assert len(methods) > 100
    names = [*methods, "OwnerService.find", "PricingPolicy.unitPrice"]  # the last two: `call_keys` itself

    shared = await frontier_keys(search.hierarchy(LOCAL, None), names, lambda n: search.call_keys(LOCAL, n))

    assert shared == [await search.call_keys(LOCAL, name) for name in names]
