"""Tool latency for `/metrics`: a FastMCP middleware that times every tool call by tool and outcome."""

from __future__ import annotations

import time

import mcp.types as mt
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult

from app.core import metrics


class ToolTiming(Middleware):
    """Observes `javakb_tool_duration_seconds{tool, outcome}`; `outcome` is `ok` or `error` (a miss is an error)."""

    def __init__(self, tools: frozenset[str]) -> None:
        self.tools = tools  # the registered names: a call naming anything else is counted as `unknown`

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        """Time the call, whatever it ends with."""
        name = context.message.name if context.message.name in self.tools else "unknown"
        started = time.perf_counter()
        outcome = "error"
        try:
            result = await call_next(context)
            outcome = "ok"
            return result
        finally:
            metrics.TOOL_SECONDS.labels(tool=name, outcome=outcome).observe(time.perf_counter() - started)
