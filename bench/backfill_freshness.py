"""A push to one project stays fresh while a 200-project backfill runs: delivery → indexed, against no backfill.

    .venv/bin/python -m bench.backfill_freshness [--projects 200] [--files 25] [--pushes 15] [--redis-db 12]
    .venv/bin/python -m bench.backfill_freshness --flood     # every backfill sync queued at once (the old way)

The sync stack of `bench.freshness` (fake GitLab over real git, PostgreSQL, Redis, a real arq worker with
the production defaults: 4 jobs, `backfill.concurrency` 2, 64 files per batch; the stub embedder in its
own process; embedded Qdrant in memory). A `live/app` project is indexed first; `--projects` projects
of `--files` generated Java files each are created under `acme/`. Then, in the same run:

1. baseline: `--pushes` one-file pushes to `live/app`, each delivered as the receiver does and timed
   until the project's index is at the new head (`indexed_sha`, the run closed);
2. the same during a backfill of group `acme` (enqueued as `POST /admin/reindex` does), which keeps
   `backfill.concurrency` syncs in flight and leaves the other worker slots to pushes;
   with `--flood`, every project's sync is enqueued at once instead (what a backfill did before).

Pushes counted "during" are only those delivered while the backfill still had unsettled projects.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.core.states import SyncTrigger
from app.jobs.queue import BACKFILL, backfill_job_id, enqueue_once, enqueue_sync
from bench.common import bench_database, latency_summary, load_avg, log
from bench.freshness_repo import generate_repository
from bench.freshness_stack import Stack, commit_all, deliver, open_stack, running_worker, wait_synced
from testkit.fake_gitlab import FakeProject

LIVE = "live/app"


async def push_once(stack: Stack, project: FakeProject, n: int) -> float:
    """One commit to the live project, delivered; seconds until it is indexed."""
    before = project.head()
    path = "src/main/java/com/acme/live/Live.java"
    after = project.commit(
        {path: f"package com.acme.live;\npublic class Live {{ int v() {{ return {n}; }} }}\n"}, f"n{n}"
    )
    t0 = time.perf_counter()
    await deliver(stack, project, before, after)
    await wait_synced(stack, project.id, after, timeout=300)
    return time.perf_counter() - t0


async def unsettled(stack: Stack, backfill_id: int) -> int:
    db = stack.deps.db
    if backfill_id:
        totals = await db.backfill_totals(backfill_id)
        return sum(totals.projects.get(s, 0) for s in ("queued", "running"))
    return int(await db.pool.fetchval("SELECT count(*) FROM projects WHERE done_gen < requested_gen"))


async def start_backfill(stack: Stack, projects: list[FakeProject], flood: bool) -> int:
    """The dispatcher's backfill of `acme` (its id), or every sync queued at once (0)."""
    db, queue = stack.deps.db, stack.deps.queue
    if flood:
        for p in projects:
            gen = await db.request_sync(p.id, p.path_with_namespace, None, None, full=True)
            await enqueue_sync(queue, p.id, gen, SyncTrigger.BACKFILL)
        return 0
    opened = await db.create_backfill(None, False, {"group": "acme", "include_subgroups": True})
    await enqueue_once(queue, BACKFILL, backfill_job_id(opened.id, opened.job_token), None, False, opened.id)
    return opened.id


async def run(args: argparse.Namespace, dsn: str, tmp: Path) -> dict[str, Any]:
    async with open_stack(args, dsn, tmp) as stack:
        live = stack.gitlab.create_project(LIVE)
        sources, _ = generate_repository(50, seed=1)
        commit_all(live, sources, "init")
        async with running_worker(stack, poll_delay=0.05):
            await deliver(stack, live, "0" * 40, live.head())
            await wait_synced(stack, live.id, live.head(), timeout=300)
            # Created after the worker's start-up sweep (the next one is `reconcile_every_s` away), so
            # only the backfill finds them.
            projects = []
            for i in range(args.projects):
                project = stack.gitlab.create_project(f"acme/team{i % 10}/svc{i}")
                commit_all(project, generate_repository(args.files, seed=100 + i)[0], "init")
                projects.append(project)
            baseline = [await push_once(stack, live, n) for n in range(args.pushes)]
            t0 = time.perf_counter()
            backfill_id = await start_backfill(stack, projects, args.flood)
            await asyncio.sleep(1.0)  # the backfill resolves its projects and fills its slots
            during: list[float] = []
            for n in range(args.pushes):
                if not await unsettled(stack, backfill_id):
                    break
                during.append(await push_once(stack, live, 1000 + n))
                await asyncio.sleep(0.5)
            while await unsettled(stack, backfill_id):
                await asyncio.sleep(0.5)
            backfill_s = time.perf_counter() - t0
    return {
        "mode": "flood" if args.flood else f"dispatcher (concurrency {stack.settings.backfill.concurrency})",
        "projects": args.projects,
        "files_per_project": args.files,
        "baseline": latency_summary(baseline),
        "during_backfill": latency_summary(during),
        "backfill_s": round(backfill_s, 1),
        "load": load_avg(),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--files", type=int, default=25, help="Java files per backfilled project")
    parser.add_argument("--pushes", type=int, default=15, help="pushes timed without, then during, the backfill")
    parser.add_argument("--flood", action="store_true", help="queue every backfill sync at once (the old way)")
    parser.add_argument("--redis-db", type=int, default=12, help="an empty Redis database (flushed at the end)")
    parser.set_defaults(keep_nagle=False, qdrant_memory=True)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log(f"backfill freshness: {args.projects} projects, load {load_avg()}")
    with bench_database() as dsn, tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(run(args, dsn, Path(tmp)))
    print(json.dumps(result))
    return 0 if result["during_backfill"]["p50_ms"] < 2000 else 1


if __name__ == "__main__":
    raise SystemExit(main())
