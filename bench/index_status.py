"""The index status and the sweep's writes at organization scale, against their per-project baselines.

Run from the repository root (a scratch PostgreSQL database is created and dropped):

    .venv/bin/python -m bench.index_status                       # 5,000 projects, 20 files each, 500 drifts
    .venv/bin/python -m bench.index_status --projects 1000 --drifts 100

1. `Database.statuses` (the one statement behind `index_status` and `GET /api/v1/index-status`) for
   every project, and for one group of 100 (a prefix), against the per-project way of answering the
   same (the projects, then each one's manifest counts and last run: 1 + 2N queries).
2. The sweep's writes for `--drifts` drifted projects: `request_syncs` (one statement) against
   `request_sync` once per project (what the sweep did before), and `record_heads` for every project.

Each timing is the median of `--repeat` runs; the report is JSON on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from app.db import Database
from bench.common import bench_database, log

SHA = "a" * 40
HEAD = "b" * 40
GROUP = 100  # projects per group: `group-<n>/project-<m>`


async def seed(db: Database, projects: int, files: int) -> None:
    """`projects` synced projects, `files` manifest rows of 5 chunks each, one finished run each."""
    ids = list(range(1, projects + 1))
    paths = [f"group-{(i - 1) // GROUP}/project-{i}" for i in ids]
    await db._execute(
        """
        INSERT INTO projects (id, repo_path, default_branch, indexed_sha, head_sha, requested_gen, done_gen, status,
                              indexed_at, head_checked_at)
        SELECT id, path, 'main', $3, $3, 1, 1, 'ok', now(), now() FROM unnest($1::bigint[], $2::text[]) AS t(id, path)
        """,
        ids, paths, SHA,
    )  # fmt: skip
    await db._execute(
        """
        INSERT INTO file_manifest (project_id, path, blob_sha, chunk_ids)
        SELECT p, 'src/main/java/F' || f || '.java', $3, ARRAY['c1', 'c2', 'c3', 'c4', 'c5']
        FROM unnest($1::bigint[]) AS p, generate_series(1, $2) AS f
        """,
        ids, files, SHA,
    )  # fmt: skip
    await db._execute(
        """
        INSERT INTO index_jobs (project_id, trigger, from_sha, to_sha, mode, status, started_at, finished_at)
        SELECT p, 'push', NULL, $2, 'tree', 'DONE', now(), now() FROM unnest($1::bigint[]) AS p
        """,
        ids, SHA,
    )  # fmt: skip
    await db._execute("ANALYZE")


async def per_project_status(db: Database, prefix: str | None) -> int:
    """The baseline: list the projects, then ask for each one's counts and last run."""
    rows = [r for r in await db.projects() if prefix is None or r.repo_path.startswith(prefix)]
    for row in rows:
        await db._fetchrow(
            "SELECT count(*), sum(cardinality(chunk_ids)) FROM file_manifest WHERE project_id = $1", row.id
        )
        await db._fetchrow("SELECT * FROM index_jobs WHERE project_id = $1 ORDER BY id DESC LIMIT 1", row.id)
    return len(rows)


async def median_s(repeat: int, run: Callable[[], Awaitable[Any]]) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def status_part(db: Database, args: argparse.Namespace) -> dict[str, Any]:
    group = "group-3/"
    batched_all = await median_s(args.repeat, lambda: db.statuses(everything=True))
    batched_group = await median_s(args.repeat, lambda: db.statuses(everything=False, prefixes=[group]))
    baseline_all = await median_s(args.repeat, lambda: per_project_status(db, None))
    baseline_group = await median_s(args.repeat, lambda: per_project_status(db, group))
    shown = len(await db.statuses(everything=True))
    assert shown == args.projects, shown
    return {
        "statuses_all_s": batched_all, "per_project_all_s": baseline_all,
        "statuses_group_s": batched_group, "per_project_group_s": baseline_group,
        "queries_all": {"statuses": 1, "per_project": 1 + 2 * args.projects},
    }  # fmt: skip


async def sweep_part(db: Database, args: argparse.Namespace) -> dict[str, Any]:
    half = args.drifts
    batch = [(i, f"p/{i}", "main", False) for i in range(1, half + 1)]
    loop = [(i, f"p/{i}", "main", False) for i in range(half + 1, 2 * half + 1)]
    t0 = time.perf_counter()
    await db.request_syncs(batch)
    batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    for project_id, path, branch, full in loop:
        await db.request_sync(project_id, path, branch, None, full=full)
    one_by_one = time.perf_counter() - t0
    heads = [(i, HEAD) for i in range(1, args.projects + 1)]
    record = await median_s(args.repeat, lambda: db.record_heads(heads))
    return {"request_syncs_s": batched, "request_sync_loop_s": one_by_one, "record_heads_all_s": record}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with bench_database() as dsn:
        db = await Database.connect(dsn)
        try:
            log(f"seeding {args.projects} projects x {args.files} files")
            await seed(db, args.projects, args.files)
            log("status")
            status = await status_part(db, args)
            log("sweep writes")
            writes = await sweep_part(db, args)
        finally:
            await db.close()
    return {"projects": args.projects, "files_per_project": args.files, "drifts": args.drifts, **status, **writes}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=5000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--drifts", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    return parser.parse_args(argv)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(parse())), indent=2))
