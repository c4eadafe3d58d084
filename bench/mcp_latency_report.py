"""The profiles and the printed report of `bench.mcp_latency`."""

from __future__ import annotations

import cProfile
import json
import pstats
import time
from pathlib import Path
from typing import Any, Final

from bench.common import log
from bench.mcp_latency_calls import Call, Run

PROFILE_TOP: Final = 14


SLOW_SHOWN_MS: Final = 5_000.0  # slowest calls listed in the text report


PROFILE_MAX_S: Final = 15.0  # a call slower than this is not profiled again (cProfile roughly doubles it)


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


_THIN_FRAMES: Final = (
    "async_qdrant",
    "bench/mcp_latency.py",
    "app/store/vectors.py:199",
    "<listcomp>",
    "<genexpr>",
    "builtins.",
)


_PROFILE_PATHS: Final = ("qdrant_client", "/app/", "/mcp_server/", "/pipeline/")
_SHORTENED: Final = ("site-packages/", f"{Path(__file__).resolve().parents[1]}/")  # installed, and this checkout


def _short(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    for marker in _SHORTENED:
        if marker in filename:
            filename = filename.split(marker, 1)[1]
    return f"{filename}:{line}:{name}"


def hot_path(stats: pstats.Stats, tool: str, share: float = 0.1, depth: int = 30) -> list[dict[str, Any]]:
    """From the tool's function down, always into the callee with the most cumulative time; other callees
    above `share` of the tool's time are listed beside each step."""
    stats.calc_callees()
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    callees: dict[Any, dict[Any, Any]] = stats.all_callees  # type: ignore[attr-defined]
    roots = [f for f in raw if f[2] == tool and f[0].endswith("mcp_server/server.py")]
    if not roots:
        return []
    func, total = roots[0], raw[roots[0]][3] or 1e-9
    path = [{"function": _short(func), "cum_s": round(raw[func][3], 3), "share": 1.0, "also": []}]
    seen = {func}
    for _ in range(depth):
        ranked = sorted(callees.get(func, {}).items(), key=lambda kv: -kv[1][3])
        if not ranked or ranked[0][1][3] < share * total or ranked[0][0] in seen:
            break  # (a function met again is recursion: check_filter -> check_must -> check_filter)
        func, (_cc, nc, _tt, ct) = ranked[0]
        seen.add(func)
        also = [
            {"function": _short(f), "cum_s": round(v[3], 3), "share": v[3] / total}
            for f, v in ranked[1:]
            if v[3] >= share * total
        ]
        path.append({"function": _short(func), "calls": nc, "cum_s": round(ct, 3), "share": ct / total, "also": also})
    return path


def profile_rows(profile: cProfile.Profile, tool: str) -> dict[str, Any]:
    stats = pstats.Stats(profile)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = [(func, nc, tt, ct) for func, (_cc, nc, tt, ct, _callers) in raw.items()]
    total = max((ct for _f, _n, _t, ct in rows), default=0.0)
    by_self = sorted(rows, key=lambda r: -r[2])[:PROFILE_TOP]
    ours = [r for r in rows if any(p in r[0][0] for p in _PROFILE_PATHS)]
    by_cum = sorted(ours, key=lambda r: -r[3])[:PROFILE_TOP]

    def fmt(r: tuple[Any, int, float, float]) -> dict[str, Any]:
        return {"function": _short(r[0]), "calls": r[1], "self_s": round(r[2], 3), "cum_s": round(r[3], 3)}

    return {
        "profiled_total_s": total,
        "hot_path": hot_path(stats, tool),
        "by_self_time": [fmt(r) for r in by_self],
        "by_cumulative": [fmt(r) for r in by_cum],
    }


async def profile_call(client: Any, call: Call) -> dict[str, Any]:
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    try:
        await client.call_tool_mcp(call.tool, call.args)
    finally:
        profile.disable()
    wall = time.perf_counter() - t0
    return {"call": call.to_json(), "wall_s_under_profile": wall, **profile_rows(profile, call.tool)}


async def profile_slow(
    client: Any, run: Run, report: dict[str, Any], slow_ms: float, *, slowest: bool = True
) -> dict[str, Any]:
    """cProfile the median and the slowest call of every tool whose p99 exceeds slow_ms.

    A call slower than PROFILE_MAX_S is not profiled: its Qdrant calls (per-sample `store` in the report's
    `slowest`) already say where its time went, and cProfile would about double it.
    """
    out: dict[str, Any] = {}
    for tool, row in report["tools"].items():
        if row["p99_ms"] <= slow_ms:
            continue
        samples = sorted((s for s in run.samples if s.call.tool == tool), key=lambda s: s.seconds)
        picks = {"median": samples[len(samples) // 2], **({"slowest": samples[-1]} if slowest else {})}
        profiles: dict[str, Any] = {}
        for label, sample in picks.items():
            if sample.seconds > PROFILE_MAX_S or (label == "slowest" and sample is picks["median"]):
                continue
            log(f"  profiling {tool} ({label}, {sample.seconds * 1000:.0f} ms unprofiled) ...")
            profiles[label] = {"unprofiled_ms": sample.seconds * 1000, **await profile_call(client, sample.call)}
        out[tool] = profiles
    return out


def _row(label: str, row: dict[str, Any], extra: str = "") -> str:
    return (
        f"{label:<34}{row['count']:>6}{row['errors']:>5}{row['p50_ms']:>9.1f}{row['p90_ms']:>9.1f}"
        f"{row['p99_ms']:>9.1f}{row['max_ms']:>9.1f}{row['cpu_p50_ms']:>9.1f}{row.get('cpu_p99_ms', 0.0):>9.1f}"
        f"{(row['cpu_per_wall'] or 0):>7.2f}{row.get('server_p50_ms', 0.0):>9.1f}{row.get('server_p99_ms', 0.0):>9.1f}"
        f"{row['output_chars_p50']:>8.0f}{extra}"
    )


def print_table(title: str, run: dict[str, Any]) -> None:
    print(f"\n{title}")
    print(
        f"{'tool (latency ms)':<34}{'calls':>6}{'err':>5}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}"
        f"{'cpu p50':>9}{'cpu p99':>9}{'cpu/w':>7}{'srv p50':>9}{'srv p99':>9}{'chars':>8}"
    )
    for tool, row in run["tools"].items():
        capped = f"  (stopped by budget: {row['skipped_for_budget']} not run)" if row["skipped_for_budget"] else ""
        print(_row(tool, row, capped))
        if len(row["by_kind"]) > 1:
            for kind, sub in row["by_kind"].items():
                print(_row(f"  {kind}", sub))
    print(_row("overall", run["overall"]))
    slowest = [(tool, slow) for tool, row in run["tools"].items() for slow in row["slowest"][:2]]
    if any(slow["ms"] >= SLOW_SHOWN_MS for _, slow in slowest):
        print(f"\n  calls over {SLOW_SHOWN_MS / 1000:.0f} s (Qdrant local-mode calls made: n x, ms)")
    for tool, slow in slowest:
        if slow["ms"] >= SLOW_SHOWN_MS:
            ops = ", ".join(f"{op} {v['calls']}x {v['ms']:.0f}" for op, v in slow["store"].items())
            print(f"  {tool:<20}{slow['ms']:>9.0f} ms  {json.dumps(slow['args'])[:70]:<72}{ops}")
    print(
        f"\n  where it goes (mean per call)    {'mean ms':>9}  {'Qdrant local-mode calls: n x, ms':<58}{'rest ms':>9}"
    )
    for tool, row in run["tools"].items():
        ops = ", ".join(f"{op} {v['per_call']:.1f}x {v['ms_per_call']:.0f}" for op, v in row["store"].items())
        print(f"  {tool:<32}{row['mean_ms']:>9.1f}  {ops:<58}{row['rest_ms_mean']:>9.1f}")
    load = run["load_average_1min_during"]
    print(
        f"  wall {run['wall_seconds']:.0f} s; 1-min load average during: {load['min']:.2f}..{load['max']:.2f} "
        f"(mean {load['mean']:.2f}); cpu p50/p99 = process CPU time per call; "
        "cpu/w = CPU / wall (< 1: waiting for a core)"
    )


def print_report(report: dict[str, Any]) -> None:
    r, env = report["result"], report["environment"]
    idx = r["index"]
    print(
        f"\nindex: {idx['points_in_store']:,} points ({idx['chunks']:,} chunks, {idx['files']:,} files) from "
        f"{', '.join(idx['modules'])}; indexing took {idx['index_seconds_total']:.0f} s in total"
        f" ({'reused' if not idx['indexed_now'] else 'indexed now: ' + ', '.join(idx['indexed_now'])})"
    )
    for module, row in idx["per_module"].items():
        print(
            f"  {module:<16}{row['files']:>7,} files{row['chunks']:>9,} chunks{row['seconds']:>8.0f} s"
            f"{row['cpu_seconds']:>8.0f} s CPU   load {row['load_average_start'][0]:.2f}"
            f" -> {row['load_average_end'][0]:.2f}"
        )
    print(
        f"store open {r['open']['seconds']:.1f} s (RSS {r['open']['rss_mb']:.0f} MB); full catalog scroll "
        f"{r['catalog']['full_scroll_s']:.1f} s; python {env['python']}, qdrant-client {env['qdrant_client']}, "
        f"fastmcp {env['fastmcp']}, {env['cpu_count']} cpus; load average {r['load_average_start'][0]:.2f} at start, "
        f"{r['load_average_end'][0]:.2f} at end"
    )
    print(f"note: {report['notes']['qdrant']}")
    print("\nbuilding blocks (ms)                                                   p50      max")
    for name, row in r["components"].items():
        print(f"  {name:<68}{row['p50_ms']:>7.1f}{row['max_ms']:>9.1f}")
    print_table("lexical-only, in-memory MCP transport (no embedder)", r["lexical"])
    if "dense" in r:
        d = r["dense"]
        build = d["build"]
        print_table(
            f"hybrid (dense + lexical): in-process FixedVectorEmbedder, {build['dimension']} dims "
            f"({d['stub']['seconds_in_embed'] * 1000:.1f} ms spent inside embed() in all)",
            d,
        )
        print(f"  dense store: {build['points']:,} points in memory, copied in {build['seconds']:.0f} s")
    if "http" in r:
        h = r["http"]
        print("\nHTTP constant (p50 ms)        in-memory     HTTP    added")
        for op, added in h["added_by_http_p50_ms"].items():
            print(f"  {op:<26}{h['in_memory'][op]['p50_ms']:>10.1f}{h['http'][op]['p50_ms']:>9.1f}{added:>9.1f}")
    print_profiles(r.get("profiles", {}), "")
    if "dense" in r:
        print_profiles(r["dense"].get("profiles", {}), " (hybrid)")


def print_profiles(by_tool: dict[str, Any], suffix: str) -> None:
    for tool, profiles in by_tool.items():
        for label, prof in profiles.items():
            print(
                f"\nprofile {tool}{suffix} ({label}: {prof['unprofiled_ms']:.0f} ms, "
                f"{prof['wall_s_under_profile']:.1f} s under cProfile) {json.dumps(prof['call']['args'])}"
            )
            for step in prof["hot_path"]:
                if any(w in step["function"] for w in _THIN_FRAMES) and not step["also"]:
                    continue  # a thin wrapper, same time as its callee (kept in the JSON)
                calls = f"{step['calls']:>7,}x" if "calls" in step else " " * 8
                also = "; ".join(f"{a['function']} {a['cum_s']:.2f} s" for a in step["also"])
                print(f"  {step['share']:>4.0%} {step['cum_s']:>7.2f} s {calls} {step['function']}")
                if also:
                    print(f"  {'':>22}also: {also}")
            for row in prof["by_self_time"][:6]:
                print(f"  self-time top: {row['self_s']:>6.2f} s {row['calls']:>9,}x  {row['function']}")
