"""The MCP Inspector's CLI (a third-party client, in Node) lists and calls our tools over real HTTP.

`scripts/bootstrap` installs the pinned inspector into `tools/inspector/node_modules` when npm is
present. These tests fail (never skip) when it is missing, since CI runs bootstrap first. Once
installed it needs no network: the bin is checked before `npx` runs (npx would otherwise look the
name up in the registry), and npm's update check is turned off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from tests.mcp_server.conftest import TOKEN
from tests.support.contract import MUTATING_TOOLS, TOOL_NAMES
from tests.support.live_app import LiveApp

pytestmark = pytest.mark.integration

ROOT: Final = Path(__file__).resolve().parents[2]
INSPECTOR: Final = ROOT / "tools" / "inspector"
BIN: Final = INSPECTOR / "node_modules" / ".bin" / "mcp-inspector"
TOOLS: Final = list(TOOL_NAMES)
EXIT_TOOL_ERROR: Final = 5  # the inspector's exit code when a tool answers isError: true


def pinned_version() -> str:
    package = json.loads((INSPECTOR / "package.json").read_text())
    version: str = package["dependencies"]["@modelcontextprotocol/inspector"]
    return version


def inspector(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `npx --prefix tools/inspector mcp-inspector --cli ARGS` with a private HOME and no npm network use."""
    npx = shutil.which("npx")
    assert npx is not None, "npx is not installed: install Node.js (20 or later), then run scripts/bootstrap"
    assert BIN.exists(), f"the MCP Inspector is not installed in {INSPECTOR}: run scripts/bootstrap"
    env = {
        **os.environ,
        "HOME": str(tmp_path),  # the inspector keeps its catalog and OAuth state under ~/.mcp-inspector
        "MCP_STORAGE_DIR": str(tmp_path / "storage"),
        "npm_config_update_notifier": "false",
        "NO_COLOR": "1",
    }
    command = [npx, "--no", "--prefix", str(INSPECTOR), "mcp-inspector", "--cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=45, check=False, cwd=tmp_path)


def against(live_app: LiveApp, *args: str, token: str = TOKEN) -> list[str]:
    """Arguments that point the CLI at the running app, with a bearer token and never an OAuth prompt."""
    return [
        live_app.mcp_url,
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {token}",
        "--stored-auth-only",
        *args,
    ]


def output(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert run.returncode == 0, run.stderr
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def test_the_pinned_inspector_is_installed(tmp_path: Path) -> None:
    run = inspector(tmp_path, "--version")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == pinned_version()


def test_the_inspector_lists_the_tools(live_app: LiveApp, tmp_path: Path) -> None:
    tools = output(inspector(tmp_path, *against(live_app, "--method", "tools/list")))["tools"]
    assert [tool["name"] for tool in tools] == TOOLS
    for tool in tools:
        assert "Example:" in tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        assert all(p.get("description") for p in tool["inputSchema"]["properties"].values()), tool["name"]
        assert "results" in tool["outputSchema"]["properties"], tool["name"]
        assert tool["annotations"]["readOnlyHint"] is (tool["name"] not in MUTATING_TOOLS)


def test_the_inspector_calls_get_symbol(live_app: LiveApp, tmp_path: Path) -> None:
    args = against(
        live_app, "--method", "tools/call", "--tool-name", "get_symbol", "--tool-arg", "name=OwnerService.find"
    )
    result = output(inspector(tmp_path, *args))
    assert result.get("isError") is not True
    items = result["structuredContent"]["results"]
    assert [item["signature"] for item in items] == [
        "find(Long id): Optional<OwnerDto>",
        "find(String lastName): List<OwnerDto>",
        "find(String lastName, int page): List<OwnerDto>",
    ]
    [content] = result["content"]
    assert content["text"].startswith("1. com.acme.shop.core.service.OwnerService.find (method, service)\n")


def test_the_inspector_calls_a_tool_in_the_2026_protocol_too(live_app: LiveApp, tmp_path: Path) -> None:
    args = against(
        live_app,
        "--protocol-era",
        "modern",
        "--method",
        "tools/call",
        "--tool-name",
        "find_endpoint",
        "--tool-arg",
        "path=/v2/visits/7",
        "http_method=DELETE",
    )
    [item] = output(inspector(tmp_path, *args))["structuredContent"]["results"]
    assert item["qualified_name"] == "com.acme.shop.jobs.rest.VisitResource.cancelVisit"
    assert item["http"] == ["DELETE /v2/visits/{visitId}"]


def test_the_inspector_shows_a_tool_error_and_exits_non_zero(live_app: LiveApp, tmp_path: Path) -> None:
    args = against(
        live_app,
        "--method",
        "tools/call",
        "--tool-name",
        "get_symbol",
        "--tool-arg",
        "name=OwnerService.find",
        "repo=x/y",
    )
    run = inspector(tmp_path, *args)
    assert run.returncode == EXIT_TOOL_ERROR, run.stderr
    result = json.loads(run.stdout)
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Unknown repository 'x/y'. Indexed: acme/shop"


def test_the_inspector_is_refused_with_a_wrong_token(live_app: LiveApp, tmp_path: Path) -> None:
    run = inspector(tmp_path, *against(live_app, "--method", "tools/list", token="wrong"))
    assert run.returncode != 0
    assert run.stdout == ""
    assert "invalid_token" in run.stderr
