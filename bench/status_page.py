"""The operator's page at organization scale: what one refresh costs PostgreSQL and the renderer.

Run from the repository root (a scratch PostgreSQL database is created and dropped):

    .venv/bin/python -m bench.status_page                       # 5,000 projects, 20 files each
    .venv/bin/python -m bench.status_page --projects 1000 --files 200

Seeds the projects as `bench.index_status` does, then times the page's projects part
(`app.console.model.read_projects`: every project's state without the manifest counts, then the 200
listed with them) against reading all of them with the counts (`app.sync.status.index_status` with an
admin's access, what `GET /api/v1/index-status` does), and the rendering of the whole page from that
model (`app.console.html.render_status`).
Each timing is the median of `--repeat` runs; the report is JSON on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

from app.auth.access import everything
from app.console.html import render_status
from app.console.model import StatusModel, read_projects
from app.db import Database
from app.sync.status import index_status
from bench.common import bench_database, log
from bench.index_status import median_s, seed


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with bench_database() as dsn:
        db = await Database.connect(dsn)
        try:
            log(f"seeding {args.projects} projects x {args.files} files")
            await seed(db, args.projects, args.files)
            admin = everything("bench")
            one_pass_s = await median_s(args.repeat, lambda: index_status(db, admin))
            read_s = await median_s(args.repeat, lambda: read_projects(db))
            projects = await read_projects(db)
        finally:
            await db.close()
    model = StatusModel(at=datetime.now(tz=UTC), projects=projects)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        page = render_status(model)
        times.append(time.perf_counter() - t0)
    return {
        "projects": args.projects,
        "files_per_project": args.files,
        "read_projects_s": read_s,
        "one_pass_index_status_s": one_pass_s,
        "render_s": sorted(times)[len(times) // 2],
        "page_bytes": len(page.encode()),
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=5000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    return parser.parse_args(argv)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(parse())), indent=2))
