"""Freshness: how long after a one-file push the changed method is searchable, on a large repository.

Run from the repository root:

    .venv/bin/python -m bench.freshness                          # 5,000 files, 20 pushes
    .venv/bin/python -m bench.freshness --files 500 --pushes 5   # a quick check
    .venv/bin/python -m bench.freshness --engine local           # the former embedded engine, to compare

The whole sync stack runs in this process, as `testkit/sync_env.py` builds it: the fake GitLab
(`testkit.fake_gitlab.FakeGitLab`, real git underneath, its HTTP server in a thread), PostgreSQL in a
database made for this run (`javakb_bench_<random>`, dropped at the end), Redis in a database index that must
be empty (flushed at the end), a real arq `Worker` started once as a background task (not burst, `poll_delay`
`--poll-delay`, so the queue pickup is in the timing) and embedded Qdrant in a temporary
folder (`--engine`: Qdrant Edge, the default, or qdrant-client's local mode).
The stub embedder is `testkit.fake_embedder.FakeEmbeddingServer` (384 dimensions, like MiniLM) in a
spawned process, so its hashing does not share our GIL. Settings are the
production defaults (64 files per batch, 4 jobs, 8 GitLab calls in flight, parsing in threads).

Both fakes answer with headers and body in two send() calls; with Nagle's algorithm on, the body then waits
for the client's delayed ACK (about 40 ms per request on loopback), which no real GitLab or embedding server
does. They are run with TCP_NODELAY like real servers, unless `--keep-nagle`.

1. A repository of `--files` Java files (entities, JPA repositories, services, REST controllers and DTOs in
   `src/main/java/com/acme/...`, generated from `--seed`) is committed in one commit, its push delivered,
   and the initial index timed (a tree walk).
2. `--pushes` times: one method of one random service or controller changes (a literal in its body), is
   committed, its push delivered through `app.sync.deliveries.DeliveryRecorder.handle` (what POST /hooks/gitlab does
   after authentication), and `deps.search.symbol(<qualified name>)` is polled every `--poll-every` seconds until it
   returns the chunk with the new content hash: that is the freshness. The script then waits for the sync job
   to finish before it counts the GitLab API calls (by endpoint), the embedding inputs and the `index_jobs` row
   of that push, and moves to the next.

Local mode answers every filtered lookup by scanning all points in Python (no payload index; Edge uses its
payload indexes), so on it both the sync's `stored_hashes` lookup and our polling cost grow with the
repository; a lookup's cost is measured and reported. Exit status: 0 when every push became searchable
and p50 < 2 s, 1 otherwise, 2 on bad arguments or a missing service.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import psycopg

from app.auth.access import LOCAL
from bench.common import LOCAL_MODE_WARNING, bench_database, write_json
from bench.freshness_repo import Editable, edit_method, generate_repository
from bench.freshness_report import build_report, print_report, run_row, wall_of
from bench.freshness_stack import (
    PROJECT_PATH,
    Stack,
    calls_since,
    commit_all,
    deliver,
    expected_chunk,
    open_stack,
    running_worker,
    searchable,
    symbol_returns,
    wait_synced,
)
from pipeline.model import SourceContext
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv

ZERO: Final = "0" * 40

# --------------------------------------------------------------------------------------------------- the repository


# --------------------------------------------------------------------------------------------------- the stack


async def initial_index(
    stack: Stack, project: FakeProject, sources: dict[str, str], timeout: float
) -> tuple[str, dict[str, Any]]:
    print(f"  committing {len(sources):,} files ...", file=sys.stderr, flush=True)
    t = time.perf_counter()
    head = commit_all(project, sources, "initial import")
    commit_s = time.perf_counter() - t
    size = sum(len(s.encode()) for s in sources.values())
    calls0 = len(stack.gitlab.calls)
    stack.stub.stats()
    stack.steps.take()
    print("  initial index ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    receive_s = await deliver(stack, project, ZERO, head)
    run = await wait_synced(stack, project.id, head, timeout)
    seconds = time.perf_counter() - t0
    steps = stack.steps.take()
    points = await stack.deps.store.count()
    manifest_chunks = await stack.deps.db.pool.fetchval(
        "SELECT coalesce(sum(cardinality(chunk_ids)), 0) FROM file_manifest WHERE project_id = $1", project.id
    )
    calls = calls_since(stack.gitlab, calls0)
    embed = stack.stub.stats()
    return head, {
        "files": len(sources),
        "bytes": size,
        "commit_seconds": commit_s,
        "receive_ms": receive_s * 1e3,
        "seconds": seconds,
        "files_per_s": len(sources) / seconds,
        "points": points,
        "manifest_chunks": int(manifest_chunks),
        "embedding_inputs": embed["inputs"],
        "embedding_requests": embed.get("requests"),
        "gitlab_calls": sum(calls.values()),
        "gitlab_calls_by_endpoint": calls,
        "index_job": run_row(run),
        "steps": steps,
    }


async def one_push(
    stack: Stack,
    project: FakeProject,
    sources: dict[str, str],
    target: Editable,
    value: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    before = project.head()
    text = edit_method(sources[target.path], target.method, value)
    after = project.commit({target.path: text}, f"tune {target.method}")
    sources[target.path] = text
    context = SourceContext(
        repo_path=project.path_with_namespace,
        gitlab_project_id=project.id,
        commit_sha=after,
        branch=project.default_branch,
    )
    expected = expected_chunk(text, target.path, target.qualified_name, context, stack.settings)
    calls0 = len(stack.gitlab.calls)
    stack.stub.stats()
    t0_wall = time.time()
    t0 = time.perf_counter()
    receive_s = await deliver(stack, project, before, after)
    fresh = await searchable(stack, expected, t0, args)
    run = await wait_synced(stack, project.id, after, args.timeout)
    synced_s = time.perf_counter() - t0
    steps = stack.steps.take()
    confirmed = await symbol_returns(stack, expected)
    embed = stack.stub.stats()
    calls = calls_since(stack.gitlab, calls0)
    return {
        "file": target.path,
        "qualified_name": target.qualified_name,
        "receive_ms": receive_s * 1e3,
        "searchable_s": fresh if confirmed else None,
        "symbol_confirmed": confirmed,
        "synced_s": synced_s,
        "steps": steps,
        "run_started_after_s": wall_of(run["started_at"], t0_wall),
        "run_finished_after_s": wall_of(run["finished_at"], t0_wall),
        "embedding_inputs": embed["inputs"],
        "embedding_requests": embed.get("requests"),
        "gitlab_calls": sum(calls.values()),
        "gitlab_calls_by_endpoint": calls,
        "index_job": run_row(run),
    }


async def measure(args: argparse.Namespace, dsn: str, tmp: Path) -> dict[str, Any]:
    print(f"generating {args.files:,} Java files (seed {args.seed}) ...", file=sys.stderr, flush=True)
    sources, editable = generate_repository(args.files, args.seed)
    rng = random.Random(args.seed + 1)
    la_start = os.getloadavg()
    async with open_stack(args, dsn, tmp) as stack:
        project = stack.gitlab.create_project(PROJECT_PATH)
        async with running_worker(stack, args.poll_delay):
            head, initial = await initial_index(stack, project, sources, args.index_timeout)
            print(f"  indexed in {initial['seconds']:.1f} s: {initial['points']:,} points", file=sys.stderr, flush=True)
            probe = rng.choice(editable)
            await stack.deps.search.symbol(LOCAL, probe.qualified_name)
            t = time.perf_counter()
            for _ in range(5):  # what one poll costs on this index, with no sync running
                await stack.deps.search.symbol(LOCAL, probe.qualified_name)
            lookup_ms = (time.perf_counter() - t) / 5 * 1e3
            pushes = []
            for i in range(args.pushes):
                target = rng.choice(editable)
                row = await one_push(stack, project, sources, target, 1000 + i, args)
                pushes.append(row)
                fresh = row["searchable_s"]
                print(
                    f"  push {i + 1}/{args.pushes}: searchable after "
                    f"{'TIMEOUT' if fresh is None else f'{fresh:.3f} s'}, synced {row['synced_s']:.3f} s, "
                    f"{row['gitlab_calls']} API calls, {row['embedding_inputs']} inputs",
                    file=sys.stderr,
                    flush=True,
                )
            audit = None
            if args.audit:
                print("  audit ...", file=sys.stderr, flush=True)
                await SyncEnv(deps=stack.deps, settings=stack.settings, gitlab=stack.gitlab).audit(project)
                audit = "index equals the head: no missing, stale or duplicate chunk"
            del head
        return build_report(args, initial, pushes, lookup_ms, stack, la_start, audit)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.freshness", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=None, help="Java files in the repository (5000; --heal: 500)")
    parser.add_argument("--pushes", type=int, default=20, help="one-file pushes measured (default: 20)")
    parser.add_argument("--seed", type=int, default=20240917, help="generator seed (default: %(default)s)")
    parser.add_argument("--poll-every", type=float, default=0.02, help="search poll interval, s (default: 0.02)")
    parser.add_argument("--poll", choices=("probe", "symbol"), default="probe", help="how to poll (see above)")
    parser.add_argument("--poll-delay", type=float, default=0.05, help="arq worker poll_delay, s (default: 0.05)")
    parser.add_argument("--timeout", type=float, default=60.0, help="per push, s (default: 60)")
    parser.add_argument("--index-timeout", type=float, default=1800.0, help="initial index, s (default: 1800)")
    parser.add_argument("--redis-db", type=int, default=13, help="an EMPTY Redis database index (default: 13)")
    parser.add_argument("--qdrant-memory", action="store_true", help="Qdrant ':memory:' instead of a folder")
    parser.add_argument("--engine", choices=("edge", "local"), default="edge", help="embedded engine (default: edge)")
    parser.add_argument("--keep-nagle", action="store_true", help="leave Nagle on in the fakes (see above)")
    parser.add_argument("--audit", action="store_true", help="at the end, compare the index with git (slow)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--heal", action="store_true", help="lost delivery and force push healing (bench/heal.py)")
    parser.add_argument("--projects", type=int, default=1000, help="--heal: projects the sweep lists (default: 1000)")
    parser.add_argument("--reconcile-every", type=int, default=10, help="--heal: sweep interval, s (default: 10)")
    args = parser.parse_args(argv)
    if args.files is None:
        args.files = 500 if args.heal else 5000
    if not 10 <= args.files <= 50_000 or not 1 <= args.pushes <= 500:
        parser.error("--files in [10, 50000], --pushes in [1, 500]")
    if not 0.001 <= args.poll_every <= 5 or not 0.001 <= args.poll_delay <= 5:
        parser.error("--poll-every and --poll-delay in [0.001, 5]")
    if args.timeout <= 0 or args.index_timeout <= 0 or not 0 <= args.redis_db <= 15:
        parser.error("timeouts must be > 0, --redis-db in [0, 15]")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING)
    tmp = Path(tempfile.mkdtemp(prefix="javakb-bench-freshness-"))
    if args.heal:
        from bench import heal

        try:
            report = heal.run(args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if args.json is not None:
            write_json(args.json, report)
        return 0
    try:
        with bench_database() as dsn:
            report = asyncio.run(measure(args, dsn, tmp))
    except (OSError, psycopg.Error) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_report(report)
    if args.json is not None:
        write_json(args.json, report)
        print(f"\nwrote {args.json}")
    return 0 if report["verdict"]["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
