"""How long a project made private stays readable to a non-member when its `project_update` hook is lost.

Run from the repository root (a scratch PostgreSQL database is created and dropped):

    .venv/bin/python -m bench.visibility_bound                    # TTL 6 s, listing every 3 s, 8 trials
    .venv/bin/python -m bench.visibility_bound --ttl 60 --every 15 --trials 3

A fake GitLab on loopback holds one internal project and a user who is not its member; the access
resolution is the web app's (`GitLabIdentities` over HTTP, open projects from PostgreSQL, the
visibility refresh `app.auth.visibility.build_refresh`), on the real monotonic clock. The user asks
for its access every `--poll` seconds (traffic); at a random moment the project is made private in
GitLab and nothing else happens (no hook, no sweep). Each trial measures the time until the user's
access no longer holds the project. `baseline` is the same without the refresh (the code before
issue 24): it gives up after three TTLs. The TTL is scaled down so that a run takes minutes; the bound
is a property of the TTL (`closed` <= TTL), which `--ttl 60` checks at the real setting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from app.auth.identity import GitLabIdentities, OpenProjects, OpenSet
from app.auth.visibility import build_refresh, open_set
from app.core.access_settings import AccessSettings
from app.core.settings import GitLabSettings, Settings
from app.db import Database
from bench.common import bench_database, log
from testkit.fake_gitlab import FakeGitLab


async def trial(identities: GitLabIdentities, gl: FakeGitLab, project_id: int, token: str, args: Any) -> float | None:
    """Seconds from the change to the first access without the project (None: still readable after 3 TTLs)."""
    gl.set_project_attributes(project_id, visibility="internal")
    await _until(identities, token, lambda ids: project_id in ids, args.poll, 3 * args.ttl)
    warm_until = time.monotonic() + random.uniform(0, args.ttl)  # traffic at a random phase of the cache
    while time.monotonic() < warm_until:
        await identities.resolve(token)
        await asyncio.sleep(args.poll)
    gl.set_project_attributes(project_id, visibility="private")
    return await _until(identities, token, lambda ids: project_id not in ids, args.poll, 3 * args.ttl)


async def _until(identities: GitLabIdentities, token: str, done: Any, poll: float, limit: float) -> float | None:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        access = await identities.resolve(token)
        if access is not None and done(access.project_ids or frozenset()):
            return time.monotonic() - start
        await asyncio.sleep(poll)
    return None


async def run(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    db = await Database.connect(dsn, min_size=1, max_size=4)
    try:
        with tempfile.TemporaryDirectory() as tmp, FakeGitLab(Path(tmp)) as gl:
            project = gl.create_project("acme/open")
            user = gl.directory.add_user("bob")
            await db.request_syncs([(project.id, project.path_with_namespace, "main", True)])
            await db.set_project_access(project.id, "internal", "enabled")
            settings = Settings(
                gitlab=GitLabSettings(url=gl.url, token=SecretStr(gl.token)),
                access=AccessSettings(ttl_s=args.ttl, visibility_every_s=args.every),
            )
            async with httpx.AsyncClient() as http:
                refresh = build_refresh(settings, lambda: http, db.set_projects_access, time.monotonic)
                assert refresh is not None

                async def refreshed() -> OpenSet:  # as the web app asks (`entry.web`)
                    return await open_set(db.open_projects, refresh)

                async def recorded_only() -> OpenSet:  # before issue 24: PostgreSQL as hooks and the sweep left it
                    return OpenSet(await db.open_projects())

                report: dict[str, Any] = {"ttl_s": args.ttl, "every_s": settings.access.visibility_every_s}
                modes: dict[str, tuple[OpenProjects, int]] = {
                    "baseline": (recorded_only, args.baseline_trials),
                    "refresh": (refreshed, args.trials),
                }
                for mode, (open_projects, trials) in modes.items():
                    report[mode] = await _mode(gl, db, http, open_projects, project.id, user.token, trials, args)
                return report
    finally:
        await db.close()


async def _mode(
    gl: FakeGitLab, db: Database, http: httpx.AsyncClient, open_projects: OpenProjects, project_id: int, token: str,
    trials: int, args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    closed: list[float | None] = []
    for n in range(trials):
        await db.set_project_access(project_id, "internal", "enabled")  # a fresh identity cache and state
        identities = GitLabIdentities(gl.url, lambda: http, open_projects, ttl_s=args.ttl)
        closed.append(await trial(identities, gl, project_id, token, args))
        log(f"{n + 1}/{trials}: {closed[-1]}")
    seen = [c for c in closed if c is not None]
    return {
        "closed_s": [round(c, 2) if c is not None else None for c in closed],
        "never_closed": sum(c is None for c in closed),
        "max_s": round(max(seen), 2) if seen else None,
        "median_s": round(statistics.median(seen), 2) if seen else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.visibility_bound", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ttl", type=float, default=6.0, help="JAVAKB_ACCESS__TTL_S, scaled down")
    parser.add_argument("--every", type=float, default=3.0, help="JAVAKB_ACCESS__VISIBILITY_EVERY_S")
    parser.add_argument("--poll", type=float, default=0.05, help="seconds between two requests of the user")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--baseline-trials", type=int, default=2)
    args = parser.parse_args()
    with bench_database() as dsn:
        print(json.dumps(asyncio.run(run(dsn, args)), indent=2))


if __name__ == "__main__":
    main()
