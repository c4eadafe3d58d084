"""Healing: a push whose every delivery was lost and force pushes, and the sweep's GitLab calls at 1,000 projects.

Run from the repository root (`bench.freshness --heal` runs this):

    .venv/bin/python -m bench.freshness --heal                  # 500 files, 1,000 projects
    .venv/bin/python -m bench.freshness --heal --files 100 --projects 200

Part 1 runs the stack of `bench.freshness` (fake GitLab over git, PostgreSQL, Redis, a real arq worker
whose reconcile cron fires every `--reconcile-every` seconds, embedded Qdrant, the stub embedder) on a
repository of `--files` files, indexed first through a delivered push, then:
1. a one-file push whose delivery is lost: seconds until the index is at the new head (the next sweep
   finds it: the project was active within the hour, so GitLab did not move `last_activity_at`, and the
   sweep asks for its branch head);
2. a force push (history rewritten, old objects pruned) whose delivery is lost too: seconds to heal;
3. a delivered force push that only amends a message: seconds until synced;
each followed by the audit of `testkit.audit` (content, spans, and every citation on the branch).

Part 2 (`--projects` empty projects in the fake, their last activity three hours old on GitLab's clock,
known to the service as synced) counts GitLab calls per sweep: the first (full) listing, a sweep when
nothing changed, and one after pushes to 1% of the projects whose deliveries were all lost.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.core.settings import SyncWorkerSettings
from bench.common import bench_database
from bench.freshness_repo import edit_method, generate_repository
from bench.freshness_report import run_row
from bench.freshness_stack import (
    PROJECT_PATH,
    Stack,
    calls_since,
    commit_all,
    deliver,
    open_stack,
    running_worker,
    wait_synced,
)
from entry.worker import reconcile
from testkit.audit import audit
from testkit.fake_gitlab import FakeProject


class Clock:
    """GitLab's clock in the fake: real time shifted by `offset`."""

    def __init__(self, offset: timedelta) -> None:
        self.offset = offset

    def __call__(self) -> datetime:
        return datetime.now(tz=UTC) + self.offset


async def time_to_sync(stack: Stack, project: FakeProject, timeout: float) -> dict[str, Any]:
    """Seconds until the index is at the project's head (the last run closed) and that run; then the audit."""
    stack.steps.take()
    t0 = time.perf_counter()
    run = await wait_synced(stack, project.id, project.head(), timeout)
    seconds = time.perf_counter() - t0
    steps = stack.steps.take()
    await audit(stack.deps, stack.deps.db, stack.settings, project)
    return {"seconds": seconds} | run_row(run) | {"steps": steps}


async def heal_run(args: argparse.Namespace, dsn: str, tmp: Path) -> dict[str, Any]:
    """Part 1: the lost delivery, the lost force push, the delivered amend."""
    sources, editable = generate_repository(args.files, args.seed)
    worker = SyncWorkerSettings(reconcile_every_s=args.reconcile_every)
    async with open_stack(args, dsn, tmp, worker=worker) as stack:
        project = stack.gitlab.create_project(PROJECT_PATH)
        async with running_worker(stack, args.poll_delay):
            head = commit_all(project, sources, "initial import")
            await deliver(stack, project, "0" * 40, head)
            initial_s = await time_to_sync(stack, project, args.index_timeout)
            target = editable[0]
            project.commit({target.path: edit_method(sources[target.path], target.method, 4242)}, "lost push")
            lost_s = await time_to_sync(stack, project, args.timeout)
            rewritten = project.head()
            project.force_reset(project.default_branch, head)
            target = editable[1]
            project.commit({target.path: edit_method(sources[target.path], target.method, 4343)}, "rewritten")
            project.prune()
            force_s = await time_to_sync(stack, project, args.timeout)
            before = project.head()
            project.amend("rewritten, with a better message")
            await deliver(stack, project, before, project.head())
            amend_s = await time_to_sync(stack, project, args.timeout)
        assert project.repo.resolve_commit(rewritten) is None
    return {
        "files": args.files,
        "reconcile_every_s": args.reconcile_every,
        "initial_index_s": initial_s,
        "lost_push_healed_s": lost_s,
        "lost_force_push_pruned_healed_s": force_s,
        "delivered_amend_synced_s": amend_s,
        "audit": "every step: no missing, stale or duplicate chunk; every citation on the branch",
    }


async def sweep_calls(stack: Stack) -> dict[str, int]:
    start = len(stack.gitlab.calls)
    await reconcile({"deps": stack.deps})
    return calls_since(stack.gitlab, start)


async def calls_run(args: argparse.Namespace, dsn: str, tmp: Path) -> dict[str, Any]:
    """Part 2: GitLab calls per sweep over `--projects` projects."""
    clock = Clock(-timedelta(hours=3))
    async with open_stack(args, dsn, tmp, gitlab_clock=clock) as stack:
        db = stack.deps.db
        projects = [stack.gitlab.create_project(f"org/team{i // 50}/p{i}") for i in range(args.projects)]
        for p in projects:  # as if indexed: empty repositories, synced, their heads seen now
            gen = await db.request_sync(p.id, p.path_with_namespace, p.default_branch, None)
            await db.mark_synced(p.id, None, gen, p.default_branch)
        full = await sweep_calls(stack)
        quiet = await sweep_calls(stack)
        clock.offset = timedelta()
        pushed = projects[::100]  # 1%: pushes whose deliveries were all lost
        for p in pushed:
            p.commit({"src/main/java/A.java": "class A {}"}, "lost")
        moved = await sweep_calls(stack)
        rows = [await db.project(p.id) for p in pushed]
        behind = sum(1 for row in rows if row is not None and row.requested_gen > row.done_gen)
    n = args.projects
    return {
        "projects": n,
        "first_sweep_full_listing": _calls(full, n),
        "sweep_nothing_changed": _calls(quiet, n),
        "sweep_after_lost_pushes": _calls(moved, n) | {"pushed": len(pushed), "sync_requested": behind},
    }


def _calls(by_endpoint: dict[str, int], projects: int) -> dict[str, Any]:
    total = sum(by_endpoint.values())
    return {"calls": total, "per_100_projects": total * 100 / projects, "by_endpoint": by_endpoint}


async def measure(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    with bench_database() as dsn:
        heal = await heal_run(args, dsn, tmp / "heal")
    with bench_database() as dsn:
        calls = await calls_run(args, dsn, tmp / "calls")
    return {"heal": heal, "sweep_calls": calls}


def print_report(report: dict[str, Any]) -> None:
    heal, calls = report["heal"], report["sweep_calls"]
    print(f"healing ({heal['files']:,} files, sweep every {heal['reconcile_every_s']} s):")
    for key in ("initial_index_s", "lost_push_healed_s", "lost_force_push_pruned_healed_s", "delivered_amend_synced_s"):
        step = heal[key]
        run = f"run: {step['mode']}, {step['run_seconds']:.2f} s, {step['trigger']}"
        print(f"  {key:34} {step['seconds']:8.2f} s ({run})")
        slow = sorted(step["steps"].items(), key=lambda kv: -_seconds(kv[1]))[:3]
        print("      " + "; ".join(f"{label} {_seconds(v):.2f} s" for label, v in slow))
    print(f"  audit: {heal['audit']}")
    print(f"GitLab calls per reconcile sweep ({calls['projects']:,} projects):")
    for key in ("first_sweep_full_listing", "sweep_nothing_changed", "sweep_after_lost_pushes"):
        row = calls[key]
        per_100 = f"{row['per_100_projects']:.2f} per 100 projects"
        print(f"  {key:34} {row['calls']:5} calls ({per_100}) {row['by_endpoint']}")
    moved = calls["sweep_after_lost_pushes"]
    print(f"  lost pushes found: {moved['sync_requested']} of {moved['pushed']}")


def _seconds(step: Any) -> float:
    return float(step["seconds"]) if isinstance(step, dict) else float(step)


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Both parts; the report is printed."""
    report = asyncio.run(measure(args, tmp))
    print_report(report)
    return report
