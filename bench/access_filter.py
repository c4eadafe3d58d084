"""Benchmark the cost of the access filter inside Qdrant queries: no filter vs allowed set vs complement.

Run from the repository root:

    .venv/bin/python -m bench.access_filter                       # 30,000 points over 20,000 project ids
    .venv/bin/python -m bench.access_filter --points 50000 --runs 30

An embedded (local mode) Qdrant in memory gets `--points` lexical-only points spread over
`--projects` GitLab project ids (payload: `gitlab_project_id`, `repo_path`, `repo_prefixes`, `name`,
a lexical vector of a few code words). Then, in the same run and interleaved, each query shape is
timed `--runs` times under each filter:

- `none`: no access condition (the local CLI, an administrator);
- `allowed-N`: `MatchAny(gitlab_project_id, N ids)` for a reader of N projects (`--sizes`);
- `complement-N`: what `Access.condition()` builds for a reader of N of the ids (`--complement-of`):
  the range `1..max` minus the few ids in it that are not readable.

Query shapes: `lexical` (a sparse query, limit 40, as `semantic_search`'s lexical prefetch),
`lookup` (a keyword scroll on `name`, as `get_symbol`) and `facet` (counts per `repo_path`, as the
repository check of every tool). Local mode answers by brute force and ignores payload indexes, so
this measures its filter evaluation, which a Qdrant server with a `gitlab_project_id` integer index
does differently (cheaper for small sets); treat the numbers as an upper bound for local mode.
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
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from qdrant_client import models as qm

from app.auth.access import PROJECT_ID_FIELD, Access
from app.core.settings import QdrantSettings
from app.store.engines import Store, open_store
from app.store.lexical import document_vector, query_vector
from app.store.vectors import LEXICAL, IndexModel

WORDS = [
    f"{stem}{i}" for stem in ("owner", "visit", "price", "order", "mail", "audit", "cache", "route") for i in range(40)
]
BATCH = 2_000


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.access_filter", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--points", type=int, default=30_000)
    parser.add_argument("--projects", type=int, default=20_000)
    parser.add_argument("--sizes", default="200,2000", help="allowed-set sizes timed as MatchAny (comma-separated)")
    parser.add_argument("--complement-of", type=int, default=19_500, help="a reader of this many, as a complement")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="write the results here too")
    return parser.parse_args(argv)


async def fill(store: Store, points: int, projects: int, rng: random.Random) -> None:
    for start in range(0, points, BATCH):
        batch = []
        for i in range(start, min(points, start + BATCH)):
            pid = 1 + i % projects
            text = " ".join(rng.choices(WORDS, k=12))
            sparse = document_vector(text)
            repo = f"g{pid % 97}/p{pid}"
            payload = {"gitlab_project_id": pid, "repo_path": repo, "repo_prefixes": [f"g{pid % 97}/", repo]}
            payload["name"] = rng.choice(WORDS)
            vector: dict[str, Any] = {
                LEXICAL: qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
            }
            batch.append(qm.PointStruct(id=str(uuid.UUID(int=i + 1)), vector=vector, payload=payload))
        await store.upsert(batch)


def conditions(projects: int, sizes: Sequence[int], complement_of: int, rng: random.Random) -> dict[str, Any]:
    """Filters by label: none, `allowed-N` (MatchAny of N ids), `complement-N` (what `Access` builds for N)."""
    everything = list(range(1, projects + 1))
    out: dict[str, Any] = {"none": None}
    for size in sizes:
        ids = sorted(rng.sample(everything, size))
        out[f"allowed-{size}"] = qm.Filter(must=[qm.FieldCondition(key=PROJECT_ID_FIELD, match=qm.MatchAny(any=ids))])
    if complement_of:
        access = Access(subject="big", project_ids=frozenset(rng.sample(everything, complement_of)))
        condition = access.condition()
        assert isinstance(condition, qm.Filter) and condition.must_not is not None, "not shorter as a complement"
        out[f"complement-{complement_of}"] = qm.Filter(must=[condition])
    return out


def shapes(store: Store, rng: random.Random) -> dict[str, Callable[[qm.Filter | None], Awaitable[Any]]]:
    sparse = query_vector(" ".join(rng.choices(WORDS, k=3)))
    name = rng.choice(WORDS)

    async def lexical(where: qm.Filter | None) -> Any:
        return await store.query(lexical=sparse, dense=None, where=where, limit=40)

    async def lookup(where: qm.Filter | None) -> Any:
        must: list[qm.Condition] = [qm.FieldCondition(key="name", match=qm.MatchValue(value=name))]
        if where is not None:
            must.append(where)
        return [r async for r in store.scroll(qm.Filter(must=must), ["repo_path"], page=1024)]

    async def facet(where: qm.Filter | None) -> Any:
        return await store.counts_by("repo_path", where=where)

    return {"lexical": lexical, "lookup": lookup, "facet": facet}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    settings = QdrantSettings(path=":memory:", collection="bench_access")  # JAVAKB_QDRANT__ENGINE picks the engine
    store = open_store(settings)
    await store.ensure(IndexModel(embedding_model=None, dimension=None))
    t0 = time.perf_counter()
    await fill(store, args.points, args.projects, rng)
    filled_s = time.perf_counter() - t0
    sizes = [int(n) for n in args.sizes.split(",") if n]
    filters = conditions(args.projects, sizes, args.complement_of, rng)
    queries = shapes(store, rng)
    times: dict[tuple[str, str], list[float]] = {(q, f): [] for q in queries for f in filters}
    order = list(times)
    for q, f in order:  # warm-up, untimed
        await queries[q](filters[f])
    for _ in range(args.runs):
        rng.shuffle(order)  # interleaved, so drift on a shared machine hits every cell alike
        for q, f in order:
            start = time.perf_counter()
            await queries[q](filters[f])
            times[(q, f)].append(time.perf_counter() - start)
    await store.close()
    rows = [
        {"query": q, "filter": f, "median_ms": round(statistics.median(t) * 1000, 2), "max_ms": round(max(t) * 1000, 2)}
        for (q, f), t in times.items()
    ]
    return {
        "engine": settings.engine,
        "points": args.points,
        "projects": args.projects,
        "runs": args.runs,
        "fill_s": round(filled_s, 1),
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", category=UserWarning)  # local mode warns above 20,000 points
    result = asyncio.run(measure(args))
    print(f"{result['points']:,} points over {result['projects']:,} project ids, {result['runs']} runs each")
    print(f"{'query':<8} {'filter':<18} {'median ms':>10} {'max ms':>9}")
    for row in result["rows"]:
        print(f"{row['query']:<8} {row['filter']:<18} {row['median_ms']:>10.2f} {row['max_ms']:>9.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
