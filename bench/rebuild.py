"""A model rebuild in service mode against the first index of the same projects, in one run.

Run from the repository root:

    .venv/bin/python -m bench.rebuild                       # 20 projects of 100 files
    .venv/bin/python -m bench.rebuild --projects 40 --files 200 --redis-db 14

The stack is `testkit.sync_env` (the fake GitLab over real git, PostgreSQL, Redis, arq burst workers
with 4 jobs at once, embedded Qdrant) with two stub embedding servers in their own processes: the
current model (384 floats) and the next one (256). Phase 1 delivers a push per project and times the
work until the queue is empty (the first index: tree walks and blobs). Phase 2 requests a rebuild,
delivers one more push to every 5th project once the new generation exists (the pushes' syncs then run
among the rebuild's jobs), and times the work until the alias has
switched. Both phases report GitLab calls, embedding requests and inputs, and seconds; the run ends
with `testkit.audit` on every project (no missing, stale or duplicate chunk, citations on the branch).
Do not run it beside the tests on the same Redis database: they flush it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from app.core.settings import EmbeddingSettings
from app.sync import rebuild
from bench.common import SEED, StubServer, bench_database, redis_url
from bench.freshness_repo import edit_method, generate_repository
from testkit.fake_gitlab import FakeProject
from testkit.sync_env import SyncEnv, sync_env

OLD_DIM, NEW_DIM = 384, 256


def arguments() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=20)
    parser.add_argument("--files", type=int, default=100, help="files per project")
    parser.add_argument(
        "--redis-db", type=int, default=14, help="a Redis database of this machine (the queue's name is new each run)"
    )
    parser.add_argument("--json", type=Path, help="also write the report here")
    return parser.parse_args()


async def phase(env: SyncEnv, old: StubServer, new: StubServer, work: Any) -> dict[str, Any]:
    """Run `work()`, then report its seconds, GitLab calls and both stubs' requests and inputs."""
    old.stats(), new.stats()
    calls = len(env.gitlab.calls)
    started = time.perf_counter()
    await work()
    seconds = time.perf_counter() - started
    current, following = old.stats(), new.stats()
    return {
        "seconds": round(seconds, 2),
        "gitlab_calls": len(env.gitlab.calls) - calls,
        "current_model": {"requests": current["requests"], "inputs": current["inputs"]},
        "next_model": {"requests": following["requests"], "inputs": following["inputs"]},
    }


async def run(args: argparse.Namespace, tmp: Path, dsn: str, old: StubServer, new: StubServer) -> dict[str, Any]:
    """Both phases and the audit."""
    following = EmbeddingSettings(base_url=new.base_url, model="stub-next", max_retries=2)
    async with sync_env(
        tmp, dsn, redis_url(args.redis_db), embedding_url=old.base_url, next_embedding=following
    ) as env:
        projects: list[tuple[FakeProject, dict[str, str], list[Any]]] = []
        for i in range(args.projects):
            files, editable = generate_repository(args.files, SEED + i)
            projects.append((env.gitlab.create_project(f"acme/team{i % 4}/service{i}"), files, editable))

        async def first_index() -> None:
            for project, files, _ in projects:
                await env.push(project, dict(files))
            await env.work(rounds=200)

        async def rebuild_under_pushes() -> None:
            rebuild_id = await rebuild.request(env.deps)
            await rebuild.start(env.deps, rebuild_id)  # the worker's first job (its queued copy then finds it started)
            for project, files, editable in projects[::5]:
                path, method = editable[0].path, editable[0].method
                await env.push(project, {path: edit_method(files[path], method, 7)})
            await env.work(rounds=200)
            row = await env.deps.db.rebuild(rebuild_id)
            assert row is not None and row.status == "done", row

        report: dict[str, Any] = {"projects": args.projects, "files_per_project": args.files}
        report["first_index"] = await phase(env, old, new, first_index)
        report["chunks"] = await env.deps.store.count()
        report["rebuild"] = await phase(env, old, new, rebuild_under_pushes)
        audited = time.perf_counter()
        for project, _, _ in projects:
            await env.audit(project)
        report["audit"] = {"projects": len(projects), "seconds": round(time.perf_counter() - audited, 2)}
        return report


def main() -> None:
    """Print the report (and write it with `--json`)."""
    args = arguments()
    old, new = StubServer(OLD_DIM), StubServer(NEW_DIM)
    try:
        with tempfile.TemporaryDirectory() as tmp, bench_database() as dsn:
            report = asyncio.run(run(args, Path(tmp), dsn, old, new))
    finally:
        old.close()
        new.close()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
