"""Every tool's input schema, as MCP clients list it, is pinned in `tool_input_schemas.json`.

The tools declare shared parameters once, as groups (`mcp_server.tool_params`) that `flat` spreads
into parameters of their own; this pins what that gives clients: the tools, their parameters in
order, types, bounds, descriptions, defaults and required lists. A deliberate change rewrites the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from fastmcp import Client

from app.runtime import Deps
from mcp_server.server import create_server
from mcp_server.tool_params import EVERYWHERE, FIRST_SET_PAGE, SetPage, Where, flat

PINNED: Final = Path(__file__).with_name("tool_input_schemas.json")


def no_deps() -> Deps:
    raise AssertionError("listing the tools needs no dependencies")


async def test_every_tool_input_schema_is_the_pinned_one_in_order() -> None:
    async with Client(create_server(no_deps)) as client:
        listed = {tool.name: tool.input_schema for tool in await client.list_tools()}
    pinned: dict[str, Any] = json.loads(PINNED.read_text())
    assert listed == pinned
    # JSON objects compare regardless of order; a client shows the parameters in the listed order.
    assert json.dumps(listed) == json.dumps(pinned)


async def test_flat_spreads_groups_into_parameters_and_gathers_them_back() -> None:
    seen: list[tuple[str, Where, SetPage]] = []

    async def tool(name: str, where: Where = EVERYWHERE, page: SetPage = FIRST_SET_PAGE) -> Any:
        seen.append((name, where, page))

    spread = flat(tool)
    await spread(name="a", repo="acme/shop", code=True)
    await spread(name="b")
    assert seen == [
        ("a", Where(repo="acme/shop"), SetPage(code=True)),
        ("b", EVERYWHERE, FIRST_SET_PAGE),
    ]
    assert spread.__name__ == "tool"
