"""What reading stored payloads through `StoredChunk.from_payload` costs, against the lookup that returns them.

Run from the repository root:

    .venv/bin/python -m bench.payload_view                 # the shop fixture as 30 repositories (~5.6k points)
    .venv/bin/python -m bench.payload_view --copies 5 --rounds 3

The `shop` fixture is indexed lexical-only into an in-memory embedded Qdrant under `--copies` repository
names. Then, in the same run and on the same points: (a) `SearchService.outline` of every file and an
unfiltered `_lookup` of everything (scroll, payload, Hit per point: what every exact lookup does), and
(b) `StoredChunk.from_payload` alone over the same payloads, already fetched. (b) / (a) is the view's share
of a lookup. Best of `--rounds` for each.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.search.scoping import Filters
from app.store.filters import everything
from app.store.payloads import StoredChunk
from app.sync.local_index import index_directory
from entry.deps import open_deps

SHOP_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "java" / "shop"


def best(rounds: int, run: Any) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


async def best_async(rounds: int, run: Any) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await run()
        times.append(time.perf_counter() - started)
    return min(times)


async def main(copies: int, rounds: int) -> None:
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as deps:
        for i in range(copies):
            await index_directory(deps, SHOP_DIR, f"acme/shop{i}")
        search = deps.search
        payloads = [dict(r.payload or {}) async for r in deps.store.scroll(everything(), True)]
        files = sorted({(p["repo_path"], p["file_path"]) for p in payloads})
        print(f"{len(payloads)} points, {len(files)} files, best of {rounds} rounds")

        async def lookup_all() -> None:
            await search._lookup(LOCAL, Filters())

        async def outlines() -> None:
            for repo, path in files:
                await search.outline(LOCAL, repo, path)

        lookup_s = await best_async(rounds, lookup_all)
        outline_s = await best_async(rounds, outlines)
        view_s = best(rounds, lambda: [StoredChunk.from_payload(p) for p in payloads])
        per_point_us = view_s / len(payloads) * 1e6
        print(f"lookup of every point: {lookup_s * 1e3:.1f} ms; from_payload of the same: {view_s * 1e3:.1f} ms")
        print(f"  from_payload: {per_point_us:.1f} us a point, {view_s / lookup_s:.1%} of the lookup")
        print(f"outline of every file ({len(files)} lookups): {outline_s * 1e3:.1f} ms")
        print(f"  from_payload of all their points: {view_s / outline_s:.1%} of those lookups")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=30, help="repositories the fixture is indexed as")
    parser.add_argument("--rounds", type=int, default=5, help="each measurement's best of this many")
    args = parser.parse_args()
    asyncio.run(main(args.copies, args.rounds))
