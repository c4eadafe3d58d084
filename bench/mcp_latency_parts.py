"""What a tool call of `bench.mcp_latency` is made of: its building blocks timed alone, and what the HTTP
transport adds per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from app.auth.access import LOCAL
from bench.common import (
    latency_summary,
)
from bench.mcp_latency_calls import (
    Catalog,
)

COMPONENT_REPEATS: Final = 5


HTTP_REPEATS: Final = 30


HTTP_TOOL_REPEATS: Final = 8


async def _repeat(fn: Callable[[], Awaitable[Any]], times: int) -> dict[str, Any]:
    seconds = []
    for _ in range(times):
        t0 = time.perf_counter()
        await fn()
        seconds.append(time.perf_counter() - t0)
    return latency_summary(seconds)


async def components(deps: Any, catalog: Catalog) -> dict[str, Any]:
    """The building blocks of a tool call, timed alone in local mode."""
    from qdrant_client import models as qm

    store = deps.store
    repo, path = catalog.files[len(catalog.files) // 2]
    one_file = qm.Filter(must=[qm.FieldCondition(key="file_path", match=qm.MatchValue(value=path))])

    async def facet() -> Any:
        return await deps.search.repositories(LOCAL)

    async def first_page(where: Any, fields: bool, page: int) -> list[Any]:
        """One scroll page (one qdrant-client call)."""
        found: list[Any] = []
        async with contextlib.aclosing(store.scroll(where, fields, page=page)) as records:
            async for record in records:
                found.append(record)
                if len(found) >= page:
                    break
        return found

    async def scroll_filtered() -> Any:
        return await first_page(one_file, True, 1024)

    async def scroll_unfiltered() -> Any:
        return await first_page(qm.Filter(), False, 10)

    async def count_filtered() -> Any:
        return await store.count(one_file)

    async def outline() -> Any:
        return await deps.search.outline(LOCAL, repo, path)

    return {
        "repositories() = facet on repo_path over every point (each tool's repo check)": await _repeat(
            facet, COMPONENT_REPEATS
        ),
        "scroll 1 page, filter file_path = one file": await _repeat(scroll_filtered, COMPONENT_REPEATS),
        "scroll 10 points, no filter, no payload": await _repeat(scroll_unfiltered, COMPONENT_REPEATS),
        "count, filter file_path = one file": await _repeat(count_filtered, COMPONENT_REPEATS),
        "SearchService.outline (one lookup, no MCP)": await _repeat(outline, COMPONENT_REPEATS),
    }


async def http_constant(deps: Any) -> dict[str, Any]:
    """tools/list and list_repos over in-memory and over streamable HTTP on loopback (same process), alternating.

    tools/list touches no store, so its difference is the transport's cost; list_repos runs a facet over every
    point, whose own variation can be larger than the transport's.

    (`ping` is not used: the HTTP transport, protocol 2026-07-28 and stateless, answers it with "Method not found".)
    """
    import uvicorn
    from fastmcp import Client

    from mcp_server.server import create_server

    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say TCP; with proto 0 (socket.socket()'s
    # default) Nagle holds back each response's second write until the client's delayed ACK (~40 ms per call).
    # `javakb serve` lets uvicorn bind host:port itself, which gets nodelay.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_server(lambda: deps, unauthenticated=LOCAL).http_app(path="/mcp", stateless_http=True)
    config = uvicorn.Config(app, lifespan="on", log_level="warning", ws="none", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        async with (
            Client(f"http://127.0.0.1:{port}/mcp") as http,
            Client(create_server(lambda: deps, unauthenticated=LOCAL)) as memory,
        ):
            clients = {"in_memory": memory, "http": http}
            ops: dict[str, tuple[Callable[[Any], Awaitable[Any]], int]] = {
                "tools/list": (lambda c: c.list_tools(), HTTP_REPEATS),
                "list_repos": (lambda c: c.call_tool_mcp("list_repos", {}), HTTP_TOOL_REPEATS),
            }
            times: dict[str, dict[str, list[float]]] = {name: {op: [] for op in ops} for name in clients}
            for op, (fn, repeats) in ops.items():
                for client in clients.values():
                    await fn(client)  # warm-up
                for _ in range(repeats):  # alternating, so a change in load hits both transports alike
                    for name, client in clients.items():
                        t0 = time.perf_counter()
                        await fn(client)
                        times[name][op].append(time.perf_counter() - t0)
        result: dict[str, Any] = {
            name: {op: latency_summary(values) for op, values in by_op.items()} for name, by_op in times.items()
        }
        result["added_by_http_p50_ms"] = {
            op: result["http"][op]["p50_ms"] - result["in_memory"][op]["p50_ms"] for op in ops
        }
        return result
    finally:
        server.should_exit = True
        await task
        sock.close()
