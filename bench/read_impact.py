"""Benchmark `read_code` and `impact` (issue 28) on the 100k-chunk JDK store, through the MCP tools.

Run from the repository root, after `bench.mcp_latency --index-only` built the store (java.base + java.desktop,
about 109k chunks):

    .venv/bin/python -m bench.mcp_latency --jobs 2 --index-only --no-dense --qdrant-path /tmp/javakb-bench/i28-read
    .venv/bin/python -m bench.read_impact --qdrant-path /tmp/javakb-bench/i28-read --calls 30 --hops 3

1. Store: the lexical Edge store `bench.mcp_latency` built (`bench.mcp_latency_stores`), opened with `open_deps`.
2. Arguments, drawn with a fixed seed from the store's catalog (`bench.mcp_latency_calls.load_catalog`):
   `read_code` of random files from line 1 (the index's lines: this store has no GitLab, so what is timed is
   the lookup of the file's chunks and the page, not GitLab's answer) and of a random later page;
   `impact(symbol, hops)` of random methods, and of `HOT` methods that thousands of JDK methods call (their
   walk ends at the node cap, the worst case).
3. Calls: `fastmcp.Client(create_server(...))` in memory (the whole MCP path, no HTTP), one untimed warm-up,
   then the calls in a seeded order; per kind p50/p90/p99/max, and for `impact` the methods reached and how
   often a bound cut the walk.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from app.auth.access import LOCAL
from bench.common import latency_summary, load_avg, log, write_json
from bench.mcp_latency_calls import load_catalog
from bench.mcp_latency_stores import lexical_settings, stored_counts

DEFAULT_STORE: Final = Path("/tmp/javakb-bench/mcp-latency")
HOT: Final = ("Objects.requireNonNull", "String.length", "ArrayList.add", "HashMap.get", "StringBuilder.append")


def plan(catalog: Any, calls: int, hops: int, seed: int) -> list[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(seed)
    files = rng.sample(catalog.files, min(calls, len(catalog.files)))
    methods = rng.sample(catalog.methods, min(calls, len(catalog.methods)))
    planned: list[tuple[str, str, dict[str, Any]]] = []
    for repo, path in files:
        planned.append(("read_code", "first page", {"repo": repo, "path": path}))
        planned.append(("read_code", "page at line 200", {"repo": repo, "path": path, "start_line": 200}))
    planned += [("impact", f"random, {hops} hops", {"symbol": m.dotted, "hops": hops}) for m in methods]
    planned += [("impact", f"hot, {hops} hops", {"symbol": name, "hops": hops}) for name in HOT]
    rng.shuffle(planned)
    return planned


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    from fastmcp import Client

    from entry.deps import open_deps
    from mcp_server.server import create_server

    async with open_deps(lexical_settings(opts.qdrant_path)) as deps:
        chunks = sum((await stored_counts(deps)).values())
        log(f"store: {chunks:,} chunks")
        catalog = await load_catalog(deps)
        planned = plan(catalog, opts.calls, opts.hops, opts.seed)
        seconds: dict[str, list[float]] = defaultdict(list)
        reached: dict[str, list[int]] = defaultdict(list)
        cuts: dict[str, Counter[str]] = defaultdict(Counter)
        misses: Counter[str] = Counter()
        load_before = load_avg()
        async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as client:
            for tool, _, args in planned[:2]:
                await client.call_tool(tool, args, raise_on_error=False)  # warm-up, untimed
            for tool, kind, args in planned:
                key = f"{tool}: {kind}"
                started = time.perf_counter()
                result = await client.call_tool(tool, args, raise_on_error=False)
                elapsed = time.perf_counter() - started
                if result.is_error:
                    misses[key] += 1  # an unknown name or a file shorter than the page: still timed
                seconds[key].append(elapsed)
                data = result.structured_content or {}
                if tool == "impact" and not result.is_error:
                    reached[key].append(len(data.get("results", [])))
                    cuts[key].update(c.split(" (")[0] for c in data.get("cut", []))
        return {
            "chunks": chunks,
            "hops": opts.hops,
            "seed": opts.seed,
            "load_average": {"before": load_before, "after": load_avg()},
            "kinds": {
                key: {
                    **latency_summary(values),
                    "misses": misses[key],
                    "methods_reached_median": sorted(reached[key])[len(reached[key]) // 2] if reached[key] else None,
                    "methods_reached_max": max(reached[key], default=None),
                    "cut": dict(cuts[key]),
                }
                for key, values in sorted(seconds.items())
            },
        }


def print_report(report: dict[str, Any]) -> None:
    print(f"{report['chunks']:,} chunks, hops={report['hops']}, load {report['load_average']}")
    print("| call | n | p50 / p90 / p99 / max (ms) | misses | methods reached (median / max) | cut by |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key, row in report["kinds"].items():
        timing = " / ".join(f"{row[k]:.0f}" for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms"))
        most = row["methods_reached_max"]
        methods = f"{row['methods_reached_median']} / {most}" if most is not None else "-"
        cut = ", ".join(f"{k} x{v}" for k, v in row["cut"].items()) or "-"
        print(f"| {key} | {row['count']} | {timing} | {row['misses']} | {methods} | {cut} |")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.read_impact", description=__doc__.split("\n")[0])
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, help="stores (%(default)s)")
    parser.add_argument("--calls", type=int, default=30, help="files and random methods drawn (%(default)s)")
    parser.add_argument("--hops", type=int, default=3, help="impact's hops (%(default)s)")
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    report = asyncio.run(run(opts))
    print_report(report)
    if opts.json:
        write_json(opts.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
