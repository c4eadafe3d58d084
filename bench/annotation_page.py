"""Benchmark `find_by_annotation`'s page on the store of `bench.mcp_latency` (109k JDK chunks), in one process.

Run from the repository root, after `.venv/bin/python -m bench.mcp_latency --index-only` built the store:

    .venv/bin/python -m bench.annotation_page
    .venv/bin/python -m bench.annotation_page --rounds 10 --qdrant-path /tmp/javakb-bench/mcp-latency

1. Edge's read cost: one `shard.scroll` of the first 500 `@Override` members with no payload, one field,
   the four order fields and the whole payload (the calling thread's CPU, median and min): what a lookup
   pays per point it reads, whichever fields it asks for.
2. The page, both ways, interleaved in rounds: every member parsed into a `Hit` and the page rendered
   (`by_annotation` + `tool_pages.set_page`, the path before), against the members sorted on their order fields and only
   the ones the page can show parsed (`annotated` + `most_shown` + `set_window_page`, the tool's path). The two
   answers are checked equal first. Process CPU per call (both threads), so a loaded machine matters less.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final

from app.auth.access import LOCAL
from app.search.scoping import EVERYWHERE
from bench.common import load_avg
from bench.mcp_latency import DEFAULT_STORE
from bench.mcp_latency_stores import lexical_settings

ANNOTATIONS: Final = ("Override", "Deprecated", "SuppressWarnings", "FunctionalInterface", "Serial", "Documented")
BUDGET: Final = 4_000  # bench.mcp_latency_calls.ANNOTATION_BUDGET
SCAN: Final = 500  # app.search.sets.SET_SCAN


def read_costs(shard: Any, runs: int) -> dict[str, tuple[float, float]]:
    import qdrant_edge as qe

    where = qe.Filter(must=[qe.FieldCondition(key="annotation_names", match=qe.MatchValue("Override"))])
    cases: dict[str, Any] = {
        "no payload": False,
        "one field (line_start)": ["line_start"],
        "four order fields": ["repo_path", "file_path", "line_start", "part_index"],
        "whole payload": True,
    }
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(runs + 3):  # three rounds of warm-up
        for name, fields in cases.items():
            t0 = time.thread_time()
            shard.scroll(qe.ScrollRequest(limit=SCAN, filter=where, with_payload=fields, with_vector=False))
            if round_ >= 3:
                seconds[name].append(time.thread_time() - t0)
    return {name: (statistics.median(v), min(v)) for name, v in seconds.items()}


async def run(store_dir: Path, rounds: int, runs: int) -> int:
    from app.search.results import place_floor
    from app.store.edge import EdgeStore
    from entry.deps import open_deps
    from mcp_server import tool_pages
    from mcp_server.render import most_shown

    async with open_deps(lexical_settings(store_dir)) as deps:
        search = deps.search

        async def every_member(name: str) -> Any:
            hits = await search.by_annotation(LOCAL, name, EVERYWHERE, SCAN)
            return tool_pages.set_page(hits, "h", 0, False, BUDGET, excerpt_lines=8)

        async def the_page(name: str) -> Any:
            members = await search.annotated(LOCAL, name, EVERYWHERE, SCAN)
            shown = most_shown((place_floor(m.repo_path, m.file_path) for m in members), BUDGET)
            window = search.hits_of(members[:shown])
            return tool_pages.set_window_page(window, len(members), "h", 0, False, BUDGET, excerpt_lines=8)

        paths: dict[str, Callable[[str], Awaitable[Any]]] = {
            "every member parsed (before)": every_member,
            "the page's members parsed": the_page,
        }
        for name in ANNOTATIONS:
            if (await every_member(name)).text != (await the_page(name)).text:
                print(f"error: the two paths answer @{name} differently", file=sys.stderr)
                return 1
        print(f"load average {load_avg()} at start")
        if not isinstance(deps.store, EdgeStore):
            print("error: the store is not Qdrant Edge (JAVAKB_QDRANT__ENGINE?)", file=sys.stderr)
            return 2
        shard = await deps.store._shard()  # the bench reads Edge directly
        print(f"\nEdge: one scroll of {SCAN} @Override members, calling thread's CPU ms (median / min of {runs})")
        for case, (median, low) in read_costs(shard, runs).items():
            print(f"  {case:28} {median * 1e3:7.2f} / {low * 1e3:6.2f}")
        cpu: dict[str, list[float]] = {label: [] for label in paths}
        for _ in range(rounds):
            for label, path in paths.items():
                for name in ANNOTATIONS:
                    c0 = time.process_time()
                    await path(name)
                    cpu[label].append(time.process_time() - c0)
        print(f"\nfind_by_annotation's page, {len(ANNOTATIONS)} annotations x {rounds} rounds, process CPU ms")
        for label, values in cpu.items():
            print(f"  {label:30} p50 {statistics.median(values) * 1e3:6.1f}  mean {statistics.mean(values) * 1e3:6.1f}")
        print(f"load average {load_avg()} at end")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.annotation_page", description=__doc__.split("\n\n")[0])
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, metavar="DIR", help="(%(default)s)")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds of both paths (%(default)s)")
    parser.add_argument("--runs", type=int, default=25, help="scrolls per read-cost case (%(default)s)")
    args = parser.parse_args(argv)
    if not (args.qdrant_path / "lexical").is_dir():
        parser.error(f"no store under {args.qdrant_path}: run `python -m bench.mcp_latency --index-only` first")
    return asyncio.run(run(args.qdrant_path, args.rounds, args.runs))


if __name__ == "__main__":
    sys.exit(main())
