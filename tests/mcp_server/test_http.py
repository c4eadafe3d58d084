"""The whole app (`create_app`) over real HTTP on loopback: MCP at /mcp, REST search, bearer tokens.

Three kinds of client talk to it: `fastmcp.Client` (protocol 2026-07-28 by default, or the legacy
`initialize` handshake), a raw JSON-RPC sequence as a 2025-06-18 client such as Cursor sends it, and
plain GETs of `/api/v1/search`. The server is `tests/mcp_server/conftest.py::live_app`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from tests.mcp_server.conftest import TOKEN
from tests.support.contract import CITATION_FIELDS, TOOL_NAMES
from tests.support.live_app import LiveApp

TOOLS: Final = list(TOOL_NAMES)
CITATION: Final = CITATION_FIELDS
FIND_SIGNATURES: Final = [
    "find(Long id): Optional<OwnerDto>",
    "find(String lastName): List<OwnerDto>",
    "find(String lastName, int page): List<OwnerDto>",
]
PROTOCOL_2025: Final = "2025-06-18"
AUTH: Final = {"Authorization": f"Bearer {TOKEN}"}
STREAMABLE: Final = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def http(live_app: LiveApp) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_app.base_url, timeout=10) as client:
        yield client


# --- (a) fastmcp.Client --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_fastmcp_client_lists_the_tools(live_app: LiveApp, mode: str) -> None:
    async with Client(live_app.mcp_url, auth=TOKEN, mode=mode) as client:
        assert [tool.name for tool in await client.list_tools()] == TOOLS


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_fastmcp_client_calls_get_symbol(live_app: LiveApp, mode: str) -> None:
    async with Client(live_app.mcp_url, auth=TOKEN, mode=mode) as client:
        result = await client.call_tool("get_symbol", {"name": "OwnerService.find"})
    assert result.structured_content is not None
    items = result.structured_content["results"]
    assert [item["signature"] for item in items] == FIND_SIGNATURES
    assert all(item.keys() >= CITATION for item in items)
    [content] = result.content
    assert isinstance(content, TextContent)
    assert content.text.startswith("1. com.acme.shop.core.service.OwnerService.find (method, service)\n")


async def test_the_fastmcp_client_sees_a_tool_error_message(live_app: LiveApp) -> None:
    async with Client(live_app.mcp_url, auth=TOKEN) as client:
        result = await client.call_tool(
            "get_symbol", {"name": "OwnerService.find", "repo": "x/y"}, raise_on_error=False
        )
    assert result.is_error
    [content] = result.content
    assert isinstance(content, TextContent)
    assert content.text == "Unknown repository 'x/y'. Indexed: acme/shop"


# --- (b) tokens ----------------------------------------------------------------------------------------------------

BAD_AUTH: Final = [
    pytest.param({}, id="missing"),
    pytest.param({"Authorization": "Bearer wrong"}, id="wrong"),
    pytest.param({"Authorization": "Bearer"}, id="empty"),
    pytest.param({"Authorization": TOKEN}, id="no-scheme"),
    pytest.param({"Authorization": f"Basic {TOKEN}"}, id="basic"),
]


@pytest.mark.parametrize("headers", BAD_AUTH)
def test_mcp_without_a_good_token_is_401(http: httpx.Client, headers: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = http.post("/mcp", json=body, headers=STREAMABLE | headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_without_oauth_a_refused_mcp_request_gets_a_plain_bearer_challenge(http: httpx.Client) -> None:
    # RFC 6750 section 3: no OAuth text ("re-register"), nothing that sends a client into an OAuth flow.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    wrong = http.post("/mcp", json=body, headers=STREAMABLE | {"Authorization": "Bearer not-a-token"})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == 'Bearer error="invalid_token"'
    assert wrong.json()["error"] == "invalid_token"
    assert len(wrong.content) < 200
    assert "register" not in wrong.text
    missing = http.post("/mcp", json=body, headers=STREAMABLE)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["error"] == "unauthorized"
    assert "resource_metadata" not in wrong.headers["www-authenticate"] + missing.headers["www-authenticate"]


@pytest.mark.parametrize("headers", BAD_AUTH)
def test_rest_search_without_a_good_token_is_401(http: httpx.Client, headers: dict[str, str]) -> None:
    response = http.get("/api/v1/search", params={"q": "owner"}, headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}
    assert response.headers["www-authenticate"] == "Bearer"


async def test_the_fastmcp_client_with_a_wrong_token_cannot_connect(live_app: LiveApp) -> None:
    with pytest.raises(MCPError):
        async with Client(live_app.mcp_url, auth="wrong") as client:
            await client.list_tools()


def test_no_oauth_discovery_is_served(http: httpx.Client) -> None:
    # Static bearer tokens only: a client that finds OAuth metadata may ignore its configured header.
    assert http.get("/.well-known/oauth-protected-resource/mcp").status_code == 404
    assert http.get("/.well-known/oauth-authorization-server").status_code == 404


# --- (c) a raw 2025-06-18 client -----------------------------------------------------------------------------------


def messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a Streamable HTTP response, whether sent as SSE or as plain JSON."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    body = response.json()
    return body if isinstance(body, list) else [body]


class Session2025:
    """What a 2025-06-18 client sends: `initialize`, then the version header (and session id, if given)."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.headers = STREAMABLE | AUTH
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            body["params"] = params
        response = self.http.post("/mcp", json=body, headers=self.headers)
        assert response.status_code == 200, response.text
        [reply] = [m for m in messages(response) if m.get("id") == self.next_id]
        assert "error" not in reply, reply
        result: dict[str, Any] = reply["result"]
        if method == "initialize":
            self.headers = self.headers | {"MCP-Protocol-Version": PROTOCOL_2025}
            if "mcp-session-id" in response.headers:
                self.headers = self.headers | {"Mcp-Session-Id": response.headers["mcp-session-id"]}
        return result

    def notify(self, method: str) -> httpx.Response:
        return self.http.post("/mcp", json={"jsonrpc": "2.0", "method": method}, headers=self.headers)

    def start(self) -> dict[str, Any]:
        info = {"name": "raw-2025", "version": "1.0"}
        result = self.request("initialize", {"protocolVersion": PROTOCOL_2025, "capabilities": {}, "clientInfo": info})
        assert self.notify("notifications/initialized").status_code == 202
        return result


def test_a_2025_client_is_answered_in_its_own_protocol_version(http: httpx.Client) -> None:
    result = Session2025(http).start()
    assert result["protocolVersion"] == PROTOCOL_2025
    assert result["serverInfo"]["name"] == "java-kb"
    assert "tools" in result["capabilities"]
    assert result["instructions"].startswith("Exact, fresh knowledge of the organization's Java code")


def test_a_2025_client_lists_every_tool_with_its_schema(http: httpx.Client) -> None:
    session = Session2025(http)
    session.start()
    tools = session.request("tools/list")["tools"]
    assert [tool["name"] for tool in tools] == TOOLS
    by_name = {tool["name"]: tool for tool in tools}
    assert by_name["get_symbol"]["inputSchema"]["required"] == ["name"]
    assert all("Example:" in tool["description"] for tool in tools)


def test_a_2025_client_calls_get_symbol(http: httpx.Client) -> None:
    session = Session2025(http)
    session.start()
    result = session.request("tools/call", {"name": "get_symbol", "arguments": {"name": "OwnerService.find"}})
    assert result.get("isError") is not True
    assert [item["signature"] for item in result["structuredContent"]["results"]] == FIND_SIGNATURES
    [content] = result["content"]
    assert content["type"] == "text"
    assert all(signature in content["text"] for signature in FIND_SIGNATURES)


def test_a_2025_client_gets_a_tool_error_as_a_result(http: httpx.Client) -> None:
    session = Session2025(http)
    session.start()
    arguments = {"query": "owner", "symbol_type": "banana"}
    result = session.request("tools/call", {"name": "semantic_search", "arguments": arguments})
    assert result["isError"] is True
    [content] = result["content"]
    assert content["text"].startswith("Bad symbol_type 'banana'; use one of annotation, class,")


# --- (d) REST search -----------------------------------------------------------------------------------------------


def test_rest_search_returns_ranked_methods_with_citations(http: httpx.Client) -> None:
    params = {"q": "who reminds owners about tomorrow's visits", "symbol_type": "method", "limit": "5"}
    response = http.get("/api/v1/search", params=params, headers=AUTH)
    assert response.status_code == 200
    body = response.json()
    assert body["query"] == params["q"]
    results = body["results"]
    assert 0 < len(results) <= 5
    assert {r["symbol_type"] for r in results} == {"method"}
    assert "com.acme.shop.jobs.scheduling.ReminderJob.sendVisitReminders" in [r["qualified_name"] for r in results[:3]]
    for result in results:
        assert result.keys() >= CITATION
        assert result["repo_path"] == "acme/shop"
        assert result["code"]


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"q": "owner", "symbol_type": "banana"}, "symbol_type must be one of"),
        ({"q": "   "}, "q is required"),
        ({"q": "owner", "limit": "ten"}, "limit must be an integer"),
    ],
)
def test_rest_search_rejects_bad_parameters_with_400(http: httpx.Client, params: dict[str, str], error: str) -> None:
    response = http.get("/api/v1/search", params=params, headers=AUTH)
    assert response.status_code == 400
    assert error in response.json()["error"]
