"""The report of `bench.freshness`: per-push rows, spreads and the printed summary."""

from __future__ import annotations

import argparse
import collections
import math
import os
import platform
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from bench.common import STUB_DIM, STUB_MODEL, nearest_rank
from bench.freshness_stack import Stack

TARGET_P50_S: Final = 2.0


def run_row(run: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "mode", "status", "trigger", "files_changed", "files_parsed", "files_skipped", "files_deleted",
        "chunks_embedded", "chunks_reused", "chunks_deleted",
    )  # fmt: skip
    row = {k: run[k] for k in keys}
    started, finished = run["started_at"], run["finished_at"]
    row["run_seconds"] = (finished - started).total_seconds() if started and finished else None
    return row


def wall_of(moment: datetime | None, t0_wall: float) -> float | None:
    return moment.timestamp() - t0_wall if moment is not None else None


def spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": nearest_rank(values, 50),
        "p90": nearest_rank(values, 90),
        "max": max(values) if values else math.nan,
        "min": min(values) if values else math.nan,
        "mean": sum(values) / len(values) if values else math.nan,
    }


def build_report(
    args: argparse.Namespace,
    initial: dict[str, Any],
    pushes: list[dict[str, Any]],
    lookup_ms: float,
    stack: Stack,
    la_start: tuple[float, float, float],
    audit: str | None,
) -> dict[str, Any]:
    fresh = [p["searchable_s"] for p in pushes if p["searchable_s"] is not None]
    endpoints: collections.Counter[str] = collections.Counter()
    for p in pushes:
        endpoints.update(p["gitlab_calls_by_endpoint"])
    modes = collections.Counter(p["index_job"]["mode"] for p in pushes)
    n = max(1, len(pushes))
    freshness = spread(fresh)
    summary: dict[str, Any] = {
        "pushes": len(pushes),
        "became_searchable": len(fresh),
        "searchable_s": freshness,
        "symbol_confirmed": sum(1 for p in pushes if p["symbol_confirmed"]),
        "steps_per_push_s": mean_steps(pushes),
        "synced_s": spread([p["synced_s"] for p in pushes]),
        "run_started_after_s": spread([p["run_started_after_s"] for p in pushes if p["run_started_after_s"]]),
        "run_seconds": spread([p["index_job"]["run_seconds"] for p in pushes if p["index_job"]["run_seconds"]]),
        "receive_ms": spread([p["receive_ms"] for p in pushes]),
        "gitlab_calls_per_push": spread([p["gitlab_calls"] for p in pushes]),
        "gitlab_calls_per_push_by_endpoint": {k: v / n for k, v in endpoints.most_common()},
        "embedding_inputs_per_push": spread([p["embedding_inputs"] for p in pushes]),
        "chunks_embedded_per_push": spread([p["index_job"]["chunks_embedded"] for p in pushes]),
        "chunks_reused_per_push": spread([p["index_job"]["chunks_reused"] for p in pushes]),
        "index_job_modes": dict(modes),
        "symbol_lookup_ms": lookup_ms,
        "poll_lookups": len(stack.lookup_ms),
        "poll_lookup_ms": spread(stack.lookup_ms),
    }
    p50 = freshness["p50"]
    return {
        "settings": {
            "files": args.files,
            "pushes": args.pushes,
            "seed": args.seed,
            "poll_every_s": args.poll_every,
            "poll": args.poll,
            "worker_poll_delay_s": args.poll_delay,
            "qdrant": ":memory:" if args.qdrant_memory else "embedded, on disk (temporary folder)",
            "engine": args.engine,
            "nagle": "left on in the fakes" if args.keep_nagle else "off (TCP_NODELAY) in the fakes",
            "files_per_batch": stack.settings.worker.files_per_batch,
            "max_jobs": stack.settings.worker.max_jobs,
            "api_concurrency": stack.settings.gitlab.api_concurrency,
            "embedding": f"{STUB_MODEL} ({STUB_DIM} dims), FakeEmbeddingServer in a spawned process",
            "redis_db": args.redis_db,
        },
        "environment": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_average_at_start": la_start,
            "load_average_at_end": os.getloadavg(),
            "platform": f"{os.uname().sysname} {os.uname().release} {os.uname().machine}",
        },
        "initial_index": initial,
        "summary": summary,
        "pushes": pushes,
        "audit": audit,
        "verdict": {
            "target_p50_s": TARGET_P50_S,
            "p50_s": p50,
            "all_searchable": len(fresh) == len(pushes),
            "met": len(fresh) == len(pushes) and p50 < TARGET_P50_S,
        },
    }


def mean_steps(pushes: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean seconds per push in each timed step, and the rest of the run (chunking, arq, event loop)."""
    totals: collections.Counter[str] = collections.Counter()
    for p in pushes:
        for label, step in p["steps"].items():
            totals[label] += step["seconds"]
    n = max(1, len(pushes))
    out = {label: seconds / n for label, seconds in totals.most_common()}
    runs = [p["index_job"]["run_seconds"] or 0.0 for p in pushes]
    # project and branch head are read before start_run (outside run_seconds); the run bookkeeping straddles it
    outside = ("GitLab: project", "GitLab: branch head", "PostgreSQL: run bookkeeping")
    inside = sum(v for k, v in out.items() if k not in outside)
    out["rest of run_seconds (chunking, part of the bookkeeping, event loop)"] = sum(runs) / n - inside
    return out


def print_report(report: dict[str, Any]) -> None:
    st, env, init, s = report["settings"], report["environment"], report["initial_index"], report["summary"]
    print()
    print(
        f"repository: {init['files']:,} Java files, {init['bytes'] / 1e6:.1f} MB; Qdrant {st['qdrant']}; "
        f"{st['embedding']}; worker poll {st['worker_poll_delay_s']} s, search poll {st['poll_every_s']} s; "
        f"Nagle {st['nagle']}"
    )
    la0, la1 = env["load_average_at_start"], env["load_average_at_end"]
    print(
        f"python {env['python']}, {env['cpu_count']} cpus, load average at start {la0[0]:.2f} {la0[1]:.2f} "
        f"{la0[2]:.2f}, at end {la1[0]:.2f} {la1[1]:.2f} {la1[2]:.2f}"
    )
    job = init["index_job"]
    print()
    print(
        f"initial index ({job['mode']}): {init['seconds']:.1f} s ({init['files_per_s']:.0f} files/s), "
        f"{init['points']:,} points ({init['manifest_chunks']:,} in the manifest), "
        f"{init['embedding_inputs']:,} embedding inputs, {init['gitlab_calls']:,} GitLab calls "
        f"{init['gitlab_calls_by_endpoint']}; commit of the files took {init['commit_seconds']:.1f} s"
    )
    print()
    print(
        f"{'#':>3} {'searchable s':>12} {'synced s':>9} {'started s':>9} {'run s':>7} {'API':>4} {'inputs':>7} "
        f"{'emb/reuse':>10}  {'mode':<8} method"
    )
    for i, p in enumerate(report["pushes"], 1):
        j = p["index_job"]
        fresh = "TIMEOUT" if p["searchable_s"] is None else f"{p['searchable_s']:.3f}"
        started = math.nan if p["run_started_after_s"] is None else p["run_started_after_s"]
        print(
            f"{i:>3} {fresh:>12} {p['synced_s']:>9.3f} {started:>9.3f} "
            f"{j['run_seconds'] or math.nan:>7.3f} {p['gitlab_calls']:>4} {p['embedding_inputs']:>7} "
            f"{j['chunks_embedded']:>4}/{j['chunks_reused']:<5}  {j['mode']:<8} {p['qualified_name']}"
        )
    fr, sy = s["searchable_s"], s["synced_s"]
    print()
    print(
        f"freshness (delivery -> searchable): p50 {fr['p50']:.3f} s, p90 {fr['p90']:.3f} s, max {fr['max']:.3f} s, "
        f"min {fr['min']:.3f} s ({s['became_searchable']}/{s['pushes']} searchable)"
    )
    if st["poll"] == "probe":
        print(f"symbol() returned the new chunk after the run for {s['symbol_confirmed']}/{s['pushes']} pushes")
    print(f"delivery -> run closed: p50 {sy['p50']:.3f} s, p90 {sy['p90']:.3f} s, max {sy['max']:.3f} s")
    print(
        f"run started (index_jobs.started_at) p50 {s['run_started_after_s']['p50']:.3f} s after the delivery; "
        f"run p50 {s['run_seconds']['p50']:.3f} s; delivery itself p50 {s['receive_ms']['p50']:.1f} ms"
    )
    print(
        f"per push: GitLab API calls p50 {s['gitlab_calls_per_push']['p50']:.0f} "
        f"(max {s['gitlab_calls_per_push']['max']:.0f}) {s['gitlab_calls_per_push_by_endpoint']}; "
        f"embedding inputs p50 {s['embedding_inputs_per_push']['p50']:.0f} "
        f"(max {s['embedding_inputs_per_push']['max']:.0f}); index_jobs modes {s['index_job_modes']}"
    )
    print(
        f"symbol() lookup on this index: {s['symbol_lookup_ms']:.1f} ms alone; while polling p50 "
        f"{s['poll_lookup_ms']['p50']:.1f} ms, max {s['poll_lookup_ms']['max']:.1f} ms over {s['poll_lookups']} polls"
    )
    print("where a push's time goes (mean s per push, from the delivery):")
    print(
        f"  {s['run_started_after_s']['mean']:7.3f}  until index_jobs.started_at (queue pickup, project, branch head)"
    )
    for label, seconds in s["steps_per_push_s"].items():
        print(f"  {seconds:7.3f}  {label}")
    print("initial index, summed time inside calls (8 GitLab calls overlap, so they add up to more than the wall):")
    for label, step in init["steps"].items():
        print(f"  {step['seconds']:8.1f} s  {step['calls']:>6,.0f} calls  {label}")
    if report["audit"]:
        print(f"audit: {report['audit']}")
    v = report["verdict"]
    print(f"\ntarget p50 < {v['target_p50_s']:.0f} s: {'MET' if v['met'] else 'MISSED'} (p50 {v['p50_s']:.3f} s)")
