"""A never-indexed project's first fetch: one repository archive against the tree walk plus one blob per file.

    .venv/bin/python -m bench.first_fetch [--files 5000] [--latency-ms 0] [--runs 3]

The generated Spring repository of `bench.freshness` (plus non-Java files the scope drops) is served
by the fake GitLab over real HTTP; both strategies go through the service's own `GitLabClient`
(python-gitlab in threads, `api_concurrency` calls in flight), the blobs fetched in batches of
`files_per_batch` as the sync does. Measured per strategy, in the same run: GitLab calls, response
bytes, seconds. `--latency-ms` delays every answer of the fake (a remote GitLab's round trip).
Only the fetch is timed: parsing, embedding and writing are the same for both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import SecretStr

from app.core.settings import ChunkingSettings, GitLabSettings, SyncWorkerSettings
from app.gitlab.client import GitLabClient
from bench.common import load_avg, log
from bench.freshness_repo import generate_repository
from bench.freshness_stack import commit_all
from pipeline.scope import Scope
from testkit.fake_gitlab import FakeGitLab, FakeProject

EXTRA_PER_100 = 10  # non-Java files (resources, docs) per 100 Java files, which the scope drops


def extra_files(count: int) -> dict[str, str]:
    """Resources and docs a real repository carries beside its Java code."""
    return {f"src/main/resources/config/app-{i}.yml": f"key{i}: value\n" * 20 for i in range(count)}


async def by_archive(client: GitLabClient, project: FakeProject, scope: Scope, limit: int) -> int:
    files = await client.archive(project.id, project.head(), scope.matches, limit)
    return len(files)


async def by_tree(client: GitLabClient, project: FakeProject, scope: Scope, limit: int, batch: int) -> int:
    tree = await client.tree(project.id, project.head())
    wanted = sorted((path, blob) for path, blob in tree.items() if scope.matches(path))
    for start in range(0, len(wanted), batch):
        part = wanted[start : start + batch]
        await asyncio.gather(*(client.raw_blob(project.id, blob, limit) for _, blob in part))
    return len(wanted)


async def measure(gitlab: FakeGitLab, client: GitLabClient, strategy: str, fetch: object) -> dict[str, object]:
    calls, sent = len(gitlab.calls), gitlab.bytes_sent
    start = time.perf_counter()
    count = await fetch  # type: ignore[misc]
    seconds = time.perf_counter() - start
    return {
        "strategy": strategy,
        "files": count,
        "calls": len(gitlab.calls) - calls,
        "mb": round((gitlab.bytes_sent - sent) / 1e6, 2),
        "seconds": round(seconds, 2),
    }


async def run(args: argparse.Namespace) -> list[dict[str, object]]:
    sources, _ = generate_repository(args.files, seed=7)
    sources |= extra_files(args.files * EXTRA_PER_100 // 100)
    chunking = ChunkingSettings().to_config()
    scope, limit = Scope.from_config(chunking), chunking.max_file_bytes
    batch = SyncWorkerSettings().files_per_batch
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeGitLab(Path(tmp), nodelay=True) as gitlab:
        project = gitlab.create_project("acme/big")
        commit_all(project, sources, "init")
        gitlab.latency_s = args.latency_ms / 1000
        client = GitLabClient(GitLabSettings(url=gitlab.url, token=SecretStr(gitlab.token)))
        try:
            for _ in range(args.runs):  # alternated, so that load drifts hit both
                rows.append(await measure(gitlab, client, "archive", by_archive(client, project, scope, limit)))
                rows.append(await measure(gitlab, client, "tree+blobs", by_tree(client, project, scope, limit, batch)))
        finally:
            client.close()
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000, help="Java files in the repository")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay of every fake GitLab answer")
    parser.add_argument("--runs", type=int, default=3, help="runs of each strategy, alternated")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log(f"first fetch of a {args.files}-file repository, latency {args.latency_ms} ms, load {load_avg()}")
    for row in asyncio.run(run(args)):
        print(json.dumps(row | {"latency_ms": args.latency_ms}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
