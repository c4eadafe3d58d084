"""Benchmark the search scope's condition (issue 16): the filter before scopes existed vs `code`, `libraries`, `all`.

Run from the repository root:

    .venv/bin/python -m bench.library_scope                         # 30,000 org points + 6,000 library points
    .venv/bin/python -m bench.library_scope --points 60000 --runs 30

An embedded Qdrant in memory (`JAVAKB_QDRANT__ENGINE` picks the engine; Edge by default) gets
`--points` lexical-only points of the org over `--projects` project ids and `--library-points`
points of a few library versions (`flags: ["library"]`, no project id). Each query shape is timed
`--runs` times, interleaved, under the filter `app.search.scoping.build_filter` builds for two
callers (`LOCAL`, and a reader of `--reader` projects) in each scope, and under the filter it built
before scopes existed (the access condition alone, `before`): what `code`, the default, adds to every
read is the difference between `before` and `code`. The shape `repos` is what every MCP tool checks
its `repo` against: `SearchService.repositories` in each scope (`before`: the facet under the access
condition alone, as it was).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from qdrant_client import models as qm

from app.auth.access import LOCAL, Access
from app.core.settings import QdrantSettings
from app.search.scoping import Filters, SearchScope, build_filter
from app.search.service import SearchService
from app.store.engines import Store, open_store
from app.store.lexical import document_vector, query_vector
from app.store.vectors import LEXICAL, IndexModel

WORDS = [f"{stem}{i}" for stem in ("owner", "visit", "price", "order", "mail", "audit", "route") for i in range(40)]
BATCH = 2_000


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.library_scope", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--points", type=int, default=30_000)
    parser.add_argument("--library-points", type=int, default=6_000)
    parser.add_argument("--projects", type=int, default=2_000)
    parser.add_argument("--reader", type=int, default=200, help="projects the restricted caller reads")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="write the results here too")
    return parser.parse_args(argv)


def point(i: int, rng: random.Random, payload: dict[str, Any]) -> qm.PointStruct:
    sparse = document_vector(" ".join(rng.choices(WORDS, k=12)))
    vector: dict[str, Any] = {LEXICAL: qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))}
    return qm.PointStruct(id=str(uuid.UUID(int=i + 1)), vector=vector, payload=payload | {"name": rng.choice(WORDS)})


async def fill(store: Store, args: argparse.Namespace, rng: random.Random) -> None:
    batch: list[qm.PointStruct] = []
    for i in range(args.points + args.library_points):
        if i < args.points:
            pid = 1 + i % args.projects
            repo = f"g{pid % 97}/p{pid}"
            payload: dict[str, Any] = {
                "gitlab_project_id": pid,
                "repo_path": repo,
                "repo_prefixes": [f"g{pid % 97}/", repo],
            }
            payload["flags"] = []
        else:
            repo = LIBRARY_PATHS[i % len(LIBRARY_PATHS)]
            payload = {"gitlab_project_id": None, "repo_path": repo, "repo_prefixes": [repo], "flags": ["library"]}
        batch.append(point(i, rng, payload))
        if len(batch) >= BATCH:
            await store.upsert(batch)
            batch = []
    await store.upsert(batch)


LIBRARY_PATHS = tuple(f"maven:org.lib:lib{i % 12}:1.{i % 3}" for i in range(12))
"""The library versions of the store; the reader's projects use every one (issue 24: who may read a library)."""


async def _readable() -> frozenset[str]:
    return frozenset(LIBRARY_PATHS)


def callers(args: argparse.Namespace, rng: random.Random) -> dict[str, Access]:
    reader = Access(subject="reader", project_ids=frozenset(rng.sample(range(1, args.projects + 1), args.reader)))
    return {"local": LOCAL, f"reader-{args.reader}": reader}


def filters(accesses: dict[str, Access]) -> dict[str, qm.Filter | None]:
    out: dict[str, qm.Filter | None] = {}
    for label, access in accesses.items():
        condition = access.condition()
        out[f"{label}/before"] = None if condition is None else qm.Filter(must=[condition])
        for scope in SearchScope:
            out[f"{label}/{scope}"] = build_filter(access, Filters(), scope=scope, libraries=LIBRARY_PATHS)
    return out


def shapes(store: Store, rng: random.Random) -> dict[str, Callable[[qm.Filter | None], Awaitable[Any]]]:
    sparse = query_vector(" ".join(rng.choices(WORDS, k=3)))
    name = rng.choice(WORDS)

    async def lexical(where: qm.Filter | None) -> Any:
        return await store.query(lexical=sparse, dense=None, where=where, limit=40)

    async def lookup(where: qm.Filter | None) -> Any:
        must: list[qm.Condition] = [qm.FieldCondition(key="name", match=qm.MatchValue(value=name))]
        return [r async for r in store.scroll(qm.Filter(must=[*must, where] if where else must), ["repo_path"])]

    async def facet(where: qm.Filter | None) -> Any:
        return await store.counts_by("repo_path", where=where)

    return {"lexical": lexical, "lookup": lookup, "facet": facet}


def repository_calls(
    store: Store, accesses: dict[str, Access], where: dict[str, qm.Filter | None]
) -> dict[tuple[str, str], Callable[[], Awaitable[Any]]]:
    service = SearchService(store, None, libraries=lambda _: _readable())
    calls: dict[tuple[str, str], Callable[[], Awaitable[Any]]] = {}
    for label, access in accesses.items():
        before = where[f"{label}/before"]
        calls[("repos", f"{label}/before")] = partial(store.counts_by, "repo_path", where=before)
        for scope in SearchScope:
            scoped = service.within(scope)
            calls[("repos", f"{label}/{scope}")] = partial(scoped.repositories, access, fresh=True)
    return calls


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    settings = QdrantSettings(path=":memory:", collection="bench_scope")
    store = open_store(settings)
    await store.ensure(IndexModel(embedding_model=None, dimension=None))
    await fill(store, args, rng)
    accesses = callers(args, rng)
    where = filters(accesses)
    queries = shapes(store, rng)
    calls: dict[tuple[str, str], Callable[[], Awaitable[Any]]] = {
        (q, f): partial(queries[q], where[f]) for q in queries for f in where
    }
    calls |= repository_calls(store, accesses, where)
    times: dict[tuple[str, str], list[float]] = {key: [] for key in calls}
    order = list(times)
    for key in order:  # warm-up, untimed
        await calls[key]()
    for _ in range(args.runs):
        rng.shuffle(order)
        for key in order:
            start = time.perf_counter()
            await calls[key]()
            times[key].append(time.perf_counter() - start)
    await store.close()
    rows = [
        {"query": q, "filter": f, "median_ms": round(statistics.median(t) * 1000, 2), "max_ms": round(max(t) * 1000, 2)}
        for (q, f), t in times.items()
    ]
    return {"engine": settings.engine, "points": args.points, "library_points": args.library_points, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    result = asyncio.run(measure(args))
    print(f"{result['engine']}: {args.points:,} org points, {args.library_points:,} library points, {args.runs} runs")
    print(f"{'query':<8} {'filter':<22} {'median ms':>10} {'max ms':>9}")
    for row in result["rows"]:
        print(f"{row['query']:<8} {row['filter']:<22} {row['median_ms']:>10.2f} {row['max_ms']:>9.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
