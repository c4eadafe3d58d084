"""A 10,000-word query gets the same clear refusal through MCP, REST and the CLI (`app.search.query_limits`).

MCP and REST over real HTTP (`tests/mcp_server/conftest.py::live_app`, uvicorn with the protocol `javakb
serve` and `web` run); the CLI through `main`, with a `javakb serve` socket listening on its store.
Before: REST answered uvicorn's `Invalid HTTP request received.` (the URL is too long for httptools) and
the CLI asyncio's `Separator is found, but chunk is longer than limit` (the socket's line limit).
"""

from __future__ import annotations

import asyncio
import http.client
import json
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

import pytest
from fastmcp import Client
from mcp.types import TextContent

from app.agents.local_socket import ask
from app.core.errors import ServiceError
from app.core.settings import QdrantSettings, Settings
from app.search.query_limits import query_refusal
from entry.cli import main
from entry.deps import open_deps
from entry.local_api import serving, socket_path
from tests.mcp_server.conftest import TOKEN
from tests.support.live_app import LiveApp

WORDS: Final = " ".join(f"visitor{i % 10}" for i in range(10_000))  # ~90 KB: over httptools' 64 KiB URL
DEFAULTS: Final = Settings().access
REFUSAL: Final = query_refusal(WORDS, DEFAULTS.max_query_chars, DEFAULTS.max_query_terms)


def test_the_refusal_is_the_one_rule_s() -> None:
    assert REFUSAL == "Query refused: the query is longer than 2000 characters. Ask with fewer words."
    words = query_refusal("owner " * 65, 2000, 64)
    assert words == "Query refused: the query has more than 64 words. Ask with fewer words."
    assert query_refusal("owner visits", 2000, 64) is None


async def test_mcp_refuses_it(live_app: LiveApp) -> None:
    async with Client(live_app.mcp_url, auth=TOKEN) as client:
        result = await client.call_tool("semantic_search", {"query": WORDS}, raise_on_error=False)
    assert result.is_error
    assert [c.text for c in result.content if isinstance(c, TextContent)] == [REFUSAL]


@pytest.mark.parametrize("words", [10_000, 65], ids=["URL-over-64KiB", "within-the-URL-limit"])
def test_rest_refuses_it(live_app: LiveApp, words: int) -> None:
    query = " ".join(WORDS.split()[:words])
    # http.client, not httpx: httpx refuses to send a URL over 64 KiB at all.
    host, port = urlsplit(live_app.base_url).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", "/api/v1/search?" + urlencode({"q": query}), headers={"Authorization": f"Bearer {TOKEN}"})
        answer = conn.getresponse()
        status, body = answer.status, answer.read()
    finally:
        conn.close()
    assert status in (400, 414), body
    assert json.loads(body) == {"error": query_refusal(query, DEFAULTS.max_query_chars, DEFAULTS.max_query_terms)}


async def test_the_cli_refuses_it_with_or_without_a_running_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    qdrant = QdrantSettings(path=str(tmp_path / "qdrant"), engine="local")
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", qdrant.path)
    monkeypatch.setenv("JAVAKB_QDRANT__ENGINE", "local")
    alone = await asyncio.to_thread(main, ["search", WORDS])  # no serve: the store would be opened here
    async with open_deps(Settings(qdrant=qdrant)) as deps, serving(deps, socket_path(qdrant)):
        through_serve = await asyncio.to_thread(main, ["search", WORDS])
        # The socket itself, asked directly, answers the same refusal (or names its size limit), never asyncio's words.
        socket_answers = [await _asked(qdrant, " ".join(WORDS.split()[:n])) for n in (2_000, 10_000)]
    err = capsys.readouterr().err
    assert (alone, through_serve) == (1, 1)
    assert err.splitlines() == [f"javakb search: {REFUSAL}"] * 2
    assert socket_answers[0] == f"javakb serve answered: {REFUSAL}"
    assert socket_answers[1] == "javakb serve answered: the request is longer than 65536 bytes"


async def _asked(qdrant: QdrantSettings, query: str) -> Any:
    try:
        await asyncio.to_thread(ask, socket_path(qdrant), {"command": "search", "query": query})
    except ServiceError as exc:  # the message is what is compared
        return str(exc)
    return "answered"
