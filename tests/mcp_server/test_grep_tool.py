"""The MCP tool `exact_search` (issue 28) in memory, and `GET /api/v1/grep` on the running app, on the `shop` fixture.

The service's own cases (lines, counts, outlines, access, limits) are `tests/app/test_grep.py`; here the
tool's declared shape, its pages within `max_chars`, its refusals, and the REST endpoint answering the same.
"""

from __future__ import annotations

from typing import Any, Final

import httpx
import jsonschema
import pytest
from fastmcp import Client

from tests.mcp_server import test_tools
from tests.mcp_server.conftest import TOKEN
from tests.mcp_server.test_tools import OWNER_SERVICE, REPO, text
from tests.support.live_app import LiveApp

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIND: Final = "ownerRepository.findById("

deps = test_tools.deps  # the module's fixtures: its own index of the `shop` fixture and a client on it
client = test_tools.client


async def test_matches_come_as_file_line_with_their_symbol_in_the_declared_shape(client: Client[Any]) -> None:
    [tool] = [t for t in await client.list_tools() if t.name == "exact_search"]
    assert tool.annotations is not None and tool.annotations.read_only_hint and tool.output_schema is not None

    result = await client.call_tool("exact_search", {"pattern": FIND, "path": "*Service.java", "context_lines": 1})

    data = result.structured_content
    assert data is not None
    jsonschema.validate(data, tool.output_schema)
    assert data["complete"] and (data["total"], len(data["results"]), data["files"]) == (4, 4, 3)
    said = text(result)
    assert said.startswith(f"4 matching lines in 3 files for {FIND!r}:")
    assert f"{REPO}:{OWNER_SERVICE}:60  in com.acme.shop.core.service.OwnerService.find (method)" in said
    assert "60>         return ownerRepository.findById(id).map(OwnerMapper::toDto);" in said


async def test_a_page_stays_within_max_chars_and_says_where_the_rest_starts(client: Client[Any]) -> None:
    whole = (await client.call_tool("exact_search", {"pattern": "return", "max_chars": 100_000})).structured_content
    first = await client.call_tool("exact_search", {"pattern": "return", "max_chars": 2000})
    data = first.structured_content
    assert whole is not None and data is not None

    assert len(text(first)) <= 2000 and data["total"] == whole["total"] > len(data["results"])
    following = await client.call_tool("exact_search", {"pattern": "return", "offset": data["next_offset"]})
    assert following.structured_content is not None
    assert following.structured_content["results"][0] == whole["results"][data["next_offset"]]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"pattern": "(unclosed", "regex": True}, "invalid regular expression for RE2"),
        ({"pattern": r"(\w)\1", "regex": True}, "no backreferences or lookaround"),
        ({"pattern": "x{2000}", "regex": True}, "repetition count over RE2's 1000"),
        ({"pattern": "findById", "repo": "no/such-repo"}, "Unknown repository"),
    ],
)
async def test_a_refused_pattern_or_repository_is_an_error_that_says_why(
    client: Client[Any], arguments: dict[str, Any], said: str
) -> None:
    result = await client.call_tool("exact_search", arguments, raise_on_error=False)

    assert result.is_error and said in text(result)


async def test_a_pattern_over_the_length_cap_is_refused_by_the_schema(client: Client[Any]) -> None:
    result = await client.call_tool("exact_search", {"pattern": "a" * 10_000}, raise_on_error=False)

    assert result.is_error and "1000" in text(result)


def grep(app: LiveApp, token: str | None = TOKEN, **params: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{app.base_url}/api/v1/grep", params=params, headers=headers, timeout=30)


async def test_rest_answers_what_the_tool_answers_in_pages(live_app: LiveApp) -> None:
    whole = grep(live_app, pattern=FIND, path="*Service.java").json()
    assert (whole["total"], whole["files"], whole["complete"], whole["next_offset"]) == (4, 3, True, None)
    assert [(r["file_path"], r["line"]) for r in whole["results"]][2] == (OWNER_SERVICE, 60)
    assert whole["results"][2]["symbol"] == "com.acme.shop.core.service.OwnerService.find"

    first = grep(live_app, pattern=FIND, path="*Service.java", limit="2").json()
    rest = grep(live_app, pattern=FIND, path="*Service.java", offset="2", limit="5").json()
    assert first["next_offset"] == 2 and first["results"] + rest["results"] == whole["results"]

    regex = grep(live_app, pattern=r"ownerRepository\.find\w+\(", regex="true", repo=REPO).json()
    assert regex["total"] > whole["total"]


async def test_rest_refuses_a_bad_pattern_and_a_missing_token(live_app: LiveApp) -> None:
    bad = grep(live_app, pattern="(unclosed", regex="true")
    assert bad.status_code == 400 and "invalid regular expression for RE2" in bad.json()["error"]
    assert grep(live_app, pattern="x" * 10_000).status_code == 400
    assert grep(live_app, pattern="").status_code == 400
    assert grep(live_app, token=None, pattern="findById").status_code == 401
