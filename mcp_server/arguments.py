"""Tool arguments that are not text: a FastMCP middleware that refuses them before any tool runs.

JSON may carry a lone UTF-16 surrogate (`"\ud800"`), which Python keeps in a `str` but no store can
hold or match: Qdrant Edge's filters refuse it with a bare `TypeError` deep in the engine. A call whose
arguments hold one is refused here, for every tool, as the caller's error.
"""

from __future__ import annotations

from typing import Any

import mcp.types as mt
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult


def not_text(value: Any) -> str | None:
    """The first string in `value` (nested lists and objects included) that is not valid Unicode, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        for item in value:
            if (found := not_text(item)) is not None:
                return found
    return None


class TextArguments(Middleware):
    """Refuses a tool call whose arguments hold a string that is not valid Unicode (a lone surrogate)."""

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        """Check the arguments, then run the tool."""
        if not_text(context.message.arguments or {}) is not None:
            raise ToolError("An argument is not valid Unicode text (a lone surrogate): send UTF-8 text.")
        return await call_next(context)
