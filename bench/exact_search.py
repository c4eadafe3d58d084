"""Benchmark exact and pattern search (`exact_search`, issue 28): p50/p99 at 100k chunks and on a 5,000-file repository.

Run from the repository root, after `bench.mcp_latency` built its JDK store (>= 100k chunks, reused):

    .venv/bin/python -m bench.mcp_latency --index-only --qdrant-path /tmp/javakb-bench/mcp-latency
    .venv/bin/python -m bench.exact_search --qdrant-path /tmp/javakb-bench/mcp-latency
    .venv/bin/python -m bench.exact_search --runs 5 --json bench/results/exact_search.json

1. Copy: every point of the JDK store (payload and lexical vector) into an in-memory Qdrant Edge store, the
   files of its first modules (by module, then path) until `--repo-files` of them rewritten as ONE repository
   `bench/jdk-5000` (its `repo_path`, `repo_prefixes`), and each repository given a GitLab project id, so a
   restricted reader's access condition runs too. The copy is not timed.
2. Searches: `SearchService.grep` (what the MCP tool and REST call), first page of 20 lines with 2 lines of
   context, in three scopes: the whole store unrestricted (`LOCAL`), the whole store as a reader of every
   project but one (`Access(project_ids=...)`: the access condition inside the query), and `repo=bench/jdk-5000`.
   Patterns: a rare literal, a common literal, a regular expression with a literal, a case-insensitive
   literal, and a regular expression without any literal. Rounds run every (scope, pattern) once in a seeded
   order; `--runs` rounds after one untimed warm-up round. Wall time per call; p50 and p99 per scope over
   all its calls (p99 of fewer than 100 calls is their slowest but one), and the p50 per pattern.

The numbers depend on the machine's load (printed at start and end): the scan is CPU-bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from app.auth.access import LOCAL, Access
from app.search.grep import GrepQuery
from app.search.offload import bounded
from app.search.patterns import PatternSpec
from app.search.service import SearchService
from app.store.edge import EdgeStore
from app.store.payloads import prefixes
from bench.common import SEED, load_avg, log
from bench.mcp_latency import DEFAULT_STORE
from bench.mcp_latency_stores import lexical_settings

BIG_REPO: Final = "bench/jdk-5000"
PATTERNS: Final[dict[str, PatternSpec]] = {
    "rare literal": PatternSpec("ConcurrentModificationException"),
    "common literal": PatternSpec("return null;"),
    "regex": PatternSpec(r"\bsynchronized\s*\(\w+\)", regex=True),
    "ignore-case literal": PatternSpec("hashcode", case_sensitive=False),
    "regex, no literal": PatternSpec(r"[A-Z]{4,}_[A-Z]{4,}", regex=True),
}
COPY_BATCH: Final = 1024


async def copy_store(source: Any, target: EdgeStore, repo_files: int) -> dict[str, Any]:
    """Every point into `target`; the first `repo_files` files as `BIG_REPO`; project ids per repository."""
    from qdrant_client import models as qm

    from app.store.vectors import IndexModel

    await target.ensure(IndexModel(embedding_model=None, dimension=None))
    files: set[tuple[str, str]] = set()
    async for record in source.scroll(qm.Filter(), ["repo_path", "file_path"], page=10_000):
        payload = record.payload or {}
        files.add((payload["repo_path"], payload["file_path"]))
    chosen = set(sorted(files)[:repo_files])
    ids: dict[str, int] = {}
    batch: list[qm.PointStruct] = []
    copied = 0
    async for record in source.scroll(qm.Filter(), True, page=10_000, with_vectors=True):
        payload = dict(record.payload or {})
        if (payload["repo_path"], payload["file_path"]) in chosen:
            payload["repo_path"] = BIG_REPO
        payload["repo_prefixes"] = list(prefixes(payload["repo_path"]))
        payload["gitlab_project_id"] = ids.setdefault(payload["repo_path"], len(ids) + 1)
        batch.append(qm.PointStruct(id=record.id, payload=payload, vector=record.vector))
        if len(batch) >= COPY_BATCH:
            await target.upsert(batch)
            copied += len(batch)
            batch = []
    if batch:
        await target.upsert(batch)
        copied += len(batch)
    return {"points": copied, "files": len(files), "repo_files": len(chosen), "projects": ids}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(search: SearchService, scopes: dict[str, tuple[Access, str | None]], runs: int, seed: int) -> Any:
    cases = [(scope, name) for scope in scopes for name in PATTERNS]
    timings: dict[tuple[str, str], list[float]] = {case: [] for case in cases}
    facts: dict[tuple[str, str], dict[str, Any]] = {}
    rng = random.Random(seed)
    for round_ in range(runs + 1):
        rng.shuffle(cases)
        for scope, name in cases:
            access, repo = scopes[scope]
            query = GrepQuery(pattern=PATTERNS[name], repo=repo)
            started = time.perf_counter()
            found = await search.grep(access, query, limit=20)
            elapsed = time.perf_counter() - started
            if round_ == 0:  # warm-up
                facts[(scope, name)] = {
                    "total": found.total,
                    "files": found.files,
                    "complete": found.complete,
                    "scanned_chunks": found.scanned_chunks,
                }
                continue
            timings[(scope, name)].append(elapsed)
        log(f"round {round_}/{runs} done")
    return timings, facts


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from entry.deps import open_deps

    report: dict[str, Any] = {"load_average_start": load_avg(), "runs": args.runs}
    async with open_deps(lexical_settings(args.qdrant_path)) as deps:
        points = await deps.store.count()
        if points < args.min_chunks:
            raise SystemExit(
                f"error: {points:,} chunks in {args.qdrant_path}; run bench.mcp_latency --index-only first"
            )
        target = EdgeStore(":memory:", "java_code")
        try:
            log(f"copying {points:,} points into memory ...")
            t0 = time.perf_counter()
            report["copy"] = await copy_store(deps.store, target, args.repo_files)
            report["copy"]["seconds"] = round(time.perf_counter() - t0, 1)
            projects: dict[str, int] = report["copy"]["projects"]
            all_but_one = frozenset(list(projects.values())[1:])
            scopes = {
                "100k chunks": (LOCAL, None),
                "100k chunks, restricted reader": (Access(subject="bench", project_ids=all_but_one), None),
                f"{args.repo_files:,}-file repository": (LOCAL, BIG_REPO),
            }
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="search") as pool:
                search = SearchService(target, None, offload=bounded(pool))
                timings, facts = await measure(search, scopes, args.runs, args.seed)
        finally:
            await target.close()
    report["load_average_end"] = load_avg()
    report["scopes"] = {}
    for scope in scopes:
        values = [t for (s, _), ts in timings.items() if s == scope for t in ts]
        report["scopes"][scope] = {
            "calls": len(values),
            "p50_ms": round(statistics.median(values) * 1e3, 1),
            "p99_ms": round(percentile(values, 0.99) * 1e3, 1),
            "patterns": {
                name: {"p50_ms": round(statistics.median(timings[(scope, name)]) * 1e3, 1), **facts[(scope, name)]}
                for name in PATTERNS
            },
        }
    return report


def print_report(report: dict[str, Any]) -> None:
    copy = report["copy"]
    print(f"store: {copy['points']:,} chunks, {copy['files']:,} files; {BIG_REPO}: {copy['repo_files']:,} files")
    print(f"load average {report['load_average_start']} at start, {report['load_average_end']} at end")
    for scope, row in report["scopes"].items():
        print(f"\n{scope}: p50 {row['p50_ms']:.0f} ms, p99 {row['p99_ms']:.0f} ms ({row['calls']} calls)")
        for name, p in row["patterns"].items():
            exact = "" if p["complete"] else " (stopped)"
            print(
                f"  {name:22} p50 {p['p50_ms']:7.0f} ms  {p['total']:>7,} lines in {p['files']:>5,} files"
                f"{exact}, {p['scanned_chunks']:,} chunks read"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, help="bench.mcp_latency's store")
    parser.add_argument("--min-chunks", type=int, default=100_000, help="refuse a smaller store (%(default)s)")
    parser.add_argument("--repo-files", type=int, default=5_000, help="files of the one big repository")
    parser.add_argument("--runs", type=int, default=10, help="timed rounds (%(default)s)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
