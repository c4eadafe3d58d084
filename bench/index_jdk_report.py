"""The printed summary of `bench.index_jdk`'s report."""

from __future__ import annotations

import sys
from typing import Any

from bench.common import fmt


def print_report(report: dict[str, Any]) -> None:
    inp, env = report["input"], report["environment"]
    print()
    print(f"JDK sources: {inp['module']}  {inp['files']:,} .java files  {inp['mb']:.1f} MB  ({inp['root']})")
    print(
        f"python {env['python']}, qdrant-client {env['qdrant_client']}, httpx {env['httpx']}, "
        f"{env['cpu_count']} cpus, load avg {env['load_average_start'][0]:.2f} at start, "
        f"{env['load_average_end'][0]:.2f} at end (1-min); app+pipeline digest {env['code_digest_start']}"
    )
    if env["code_digest_end"] != env["code_digest_start"]:
        print(f"WARNING: app/ or pipeline/ changed during the run (digest now {env['code_digest_end']})")
    print(f"note: {report['notes']['qdrant']}")
    modes = [m for m in report["modes"] if "error" not in m]
    if modes:
        print()
        header = (
            f"{'mode':<12}{'run':<8}{'time s':>9}{'cpu s':>8}{'open s':>8}{'chunks/s':>10}{'files/s':>9}"
            f"{'embedded':>10}{'reused':>8}{'inputs':>8}{'RSS open':>10}{'peak RSS':>10}{'disk':>10}"
        )
        print(header)
        for m in modes:
            for run in ("cold", "rerun"):
                row = m[run]
                inputs = row["embedding_inputs_chunks"] + row["embedding_inputs_other"]
                print(
                    f"{m['mode']:<12}{run:<8}{row['seconds']:>9.1f}{row['cpu_seconds']:>8.1f}{row['open_s']:>8.1f}"
                    f"{row['chunks_per_s']:>10,.0f}{row['files_per_s']:>9,.1f}{row['embedded']:>10,}"
                    f"{row['reused']:>8,}{inputs:>8,}{row['rss_mb_after_open']:>7,.0f} MB"
                    f"{fmt(row['peak_rss_mb'], '>7,.0f')} MB{fmt(row.get('disk_mb'), '>7,.0f')} MB"
                )
        print(
            "  (inputs = texts sent to the embedder, the dimension probe included; RSS open = after opening the"
            " store, peak RSS = of the indexing phase, disk = the store's files after the phase; MB = 10^6 bytes)"
        )
        for m in modes:
            start, end = m["load_average_start"], m["load_average_end"]
            print(f"  {m['mode']}: load average {start[0]:.2f} at start, {end[0]:.2f} at end (1-min)")
        print()
        print(
            f"{'search latency ms':<26}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}   "
            f"{'symbol p50/p99':>16}{'callers p50/p99':>17}"
        )
        for m in modes:
            for phase, label in (("search_after_cold", "after cold"), ("search_after_rerun", "after re-run")):
                s = m[phase]
                lat, sym, cal = s["search"], s["lookups"]["symbol"], s["lookups"]["callers"]
                print(
                    f"{m['mode'] + ' ' + label:<26}{lat['p50_ms']:>8.1f}{lat['p90_ms']:>8.1f}{lat['p99_ms']:>8.1f}"
                    f"{lat['max_ms']:>8.1f}   {sym['p50_ms']:>7.1f}/{sym['p99_ms']:<8.1f}"
                    f"{cal['p50_ms']:>8.1f}/{cal['p99_ms']:<8.1f}"
                )
        for m in modes:
            print_breakdown(m)
    for m in report["modes"]:
        if "error" in m:
            print(f"\nMODE {m['mode']} FAILED:\n{m['error']}", file=sys.stderr)
        for problem in m.get("problems", []):
            print(f"\nBUG ({m['mode']}): {problem}", file=sys.stderr)


def print_breakdown(m: dict[str, Any]) -> None:
    print(f"\n{m['mode']}: where the index time went (s)")
    for run in ("cold", "rerun"):
        row = m[run]
        steps = ", ".join(f"{name} {stat['seconds']:.1f}" for name, stat in sorted(row["steps"].items()))
        line = f"  {run:<6} total {row['seconds']:.1f}: {steps}, rest {row['other_seconds']:.1f}"
        if "stub_seconds" in row:
            line += f"; in-process stub {row['stub_seconds']:.1f}"
        if "stub_server" in row:
            srv = row["stub_server"]
            line += f"; stub server {srv['requests']:,} requests, {srv['cpu_seconds']:.1f} s CPU in its own process"
        print(line)
        growth = row["batch_growth"]
        if growth is not None:
            print(
                f"         batches: {growth['batches']}, ms/chunk first quarter "
                f"{growth['first_quarter_ms_per_chunk']:.2f} -> last quarter "
                f"{growth['last_quarter_ms_per_chunk']:.2f} ({growth['growth']:.1f}x)"
            )
    cat = m["catalog"]
    print(f"  full scroll of {cat['points']:,} points (to generate queries): {cat['full_scroll_s']:.1f} s")
