"""`semantic_search` on a stored bench store, each call's answer recorded: to compare two checkouts or settings.

Run from the repository root on a store `bench.hybrid_latency --store DIR --optimize` built (the calls are
the same: `plan_calls` of the store's catalog, fixed seed):

    .venv/bin/python -m bench.payload_cache --store DIR --json OUT.json [--payload-cache N] [--passes 2]

Every `semantic_search` call of the plan runs through `fastmcp.Client(create_server(...))`, hybrid (the
embedded model) and lexical-only (the same service without an embedder), alternating which goes first, and
the whole plan `--passes` times in one process. Per call and mode: the server's wall and CPU time (the tools'
middleware clock, `bench.mcp_latency.ServerClock`) and the answer's text (digested; the first pass's ids in
order). `--payload-cache N` sets `qdrant.payload_cache` (without it: the checkout's default, so a checkout
without the setting runs too). The process's RSS at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import gc
import hashlib
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import SEED, latency_summary, load_avg, rss_mb, write_json
from bench.hybrid_latency import ALIAS
from bench.mcp_latency import clocked_server
from bench.mcp_latency_calls import load_catalog, plan_calls
from bench.mcp_latency_report import text_of

HIT = re.compile(r"^\d+\. (.+)$", re.MULTILINE)  # a hit's first line: `N. qualified.name (kind)`
PLACE = re.compile(r"^ +(\S+:\S+:\d+-\d+)$", re.MULTILINE)  # its place: `repo:file:start-end`


def bench_settings(store: Path, payload_cache: int | None) -> Any:
    """`bench.hybrid_latency.settings` on `store`, with `qdrant.payload_cache` when given."""
    from app.core.settings import ChunkingSettings, EmbeddingSettings, QdrantSettings, Settings

    extra: dict[str, Any] = {} if payload_cache is None else {"payload_cache": payload_cache}
    return Settings(
        chunking=ChunkingSettings(include=("**/*.java",), exclude=()),
        embedding=EmbeddingSettings(provider="embedded"),
        qdrant=QdrantSettings(path=str(store), collection=ALIAS, **extra),
    )


def answer_ids(text: str) -> list[str]:
    """The answer's hits as `location name (kind)`, in order (`N. name (kind)` then an indented `repo:file:lines`)."""
    names = [m.group(1) for m in HIT.finditer(text)]
    places = [m.group(1) for m in PLACE.finditer(text)]
    return [f"{place} {name}" for name, place in zip(names, places, strict=False)]


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    from fastmcp import Client

    from entry.deps import open_deps

    async with open_deps(bench_settings(opts.store, opts.payload_cache)) as deps:
        await deps.store.ensure(await deps.index_model())
        points = await deps.store.count()
        catalog = await load_catalog(deps)
        calls = [c for c in plan_calls(catalog, opts.calls, opts.seed) if c.tool == "semantic_search"]
        del catalog
        lexical_search = copy.copy(deps.search)
        lexical_search.embedder = None
        lexical_deps = dataclasses.replace(deps, embedder=None, search=lexical_search)
        servers = {"hybrid": clocked_server(deps), "lexical": clocked_server(lexical_deps)}
        rss_opened = rss_mb()
        passes: list[dict[str, Any]] = []
        async with Client(servers["hybrid"][0]) as hybrid, Client(servers["lexical"][0]) as lexical:
            clients = {"hybrid": hybrid, "lexical": lexical}
            await hybrid.call_tool_mcp(calls[0].tool, {"query": "warm up"})
            await lexical.call_tool_mcp(calls[0].tool, {"query": "warm up"})
            gc.collect()
            for _ in range(opts.passes):
                rows: dict[str, list[dict[str, Any]]] = {"hybrid": [], "lexical": []}
                for i, call in enumerate(calls):
                    for mode in ("hybrid", "lexical") if i % 2 == 0 else ("lexical", "hybrid"):
                        clock = servers[mode][1]
                        clock.last = 0.0
                        result = await clients[mode].call_tool_mcp(call.tool, call.args)
                        text = text_of(result)
                        rows[mode].append(
                            {
                                "kind": call.kind,
                                "server_ms": 1000 * clock.last,
                                "server_cpu_ms": 1000 * clock.last_cpu,
                                "digest": hashlib.sha1(text.encode()).hexdigest(),
                                "ids": answer_ids(text)[:10],
                            }
                        )
                passes.append(
                    {
                        mode: {
                            "server": latency_summary([r["server_ms"] / 1000 for r in found]),
                            "server_cpu": latency_summary([r["server_cpu_ms"] / 1000 for r in found]),
                            "calls": found,
                        }
                        for mode, found in rows.items()
                    }
                )
    return {
        "points": points,
        "calls": len(calls),
        "rss_mb_opened": rss_opened,
        "rss_mb_end": rss_mb(),
        "passes": passes,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.payload_cache", description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="a store `bench.hybrid_latency --store` built")
    parser.add_argument("--calls", type=int, default=600, help="calls planned over all tools (as hybrid_latency)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--passes", type=int, default=2, help="times the whole plan runs (default: %(default)s)")
    parser.add_argument("--payload-cache", type=int, default=None, help="qdrant.payload_cache (default: the setting's)")
    parser.add_argument("--json", type=Path, required=True, metavar="PATH")
    opts = parser.parse_args(argv)
    started, load = time.perf_counter(), load_avg()
    result = asyncio.run(run(opts))
    result["load_average"] = [load, load_avg()]
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    write_json(opts.json, result)
    for n, found in enumerate(result["passes"], 1):
        for mode, row in found.items():
            print(
                f"pass {n} {mode:8s} server p50 {row['server']['p50_ms']:.1f} ms"
                f"  cpu p50 {row['server_cpu']['p50_ms']:.1f} ms"
            )
    print(f"rss {result['rss_mb_opened']:.0f} -> {result['rss_mb_end']:.0f} MB; load {result['load_average']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
