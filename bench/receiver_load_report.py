"""The profile summary and the printed report of `bench.receiver_load`."""

from __future__ import annotations

import collections
import math
import re
from collections.abc import Sequence
from typing import Any, Final

PROFILE_S: Final = 5

PROFILE_HZ: Final = 200


TARGET_RATE: Final = 2000.0


TARGET_P99_MS: Final = 10.0


STEPS: Final = (  # (label, function, file) of the receiver's own steps; the deepest one on a stack wins
    ("enqueue: one MULTI per batch (app/queue.push_syncs)", "push_syncs", "app/jobs/queue.py"),
    ("record: one asyncpg query per batch (app/db.record_sync_deliveries)", "record_sync_deliveries", "app/db.py"),
    ("group commit (hooks/group_commit)", "_run", "hooks/group_commit.py"),
    ("read body (hooks/receiver.read_body)", "read_body", "hooks/receiver.py"),
    ("authenticate (X-Gitlab-Token)", "authenticate", "hooks/receiver.py"),
    ("decode JSON (json.loads)", "_decode", "hooks/receiver.py"),
    ("parse event (hooks/events.parse_event)", "parse_event", "hooks/events.py"),
    ("rest of the endpoint (JSONResponse, log call)", "gitlab_hook", "hooks/receiver.py"),
)


PACKAGES: Final = (  # outside our steps: the first of these packages seen from the innermost frame outwards
    ("HTTP/1.1 parser and writer (h11)", "h11/"),
    ("uvicorn protocol and ASGI glue", "uvicorn/"),
    ("Starlette routing, Request, Response", "starlette/"),
    ("asyncpg protocol (replies, pool)", "asyncpg/"),
    ("redis-py outside enqueue (pool, replies)", "redis/"),
    ("arq outside enqueue", "arq/"),
    ("anyio", "anyio/"),
    ("logging", "logging/"),
)


LOOP: Final = "asyncio event loop, selectors, socket transports"


FRAME: Final = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def split_frame(frame: str) -> tuple[str, str]:
    """`Class.method (pkg/mod.py:12)` → (`method`, `pkg/mod.py`)."""
    match = FRAME.match(frame)
    if match is None:
        return frame, ""
    return match["func"].rsplit(".", 1)[-1], match["file"]


def classify(frames: Sequence[str]) -> str:
    """The receiver step (deepest first) or, outside them, the library a sample is in."""
    parsed = [split_frame(f) for f in reversed(frames)]
    for func, file in parsed:
        for label, name, where in STEPS:
            if func == name and file.endswith(where):
                return label
    # Only frames inside the callback the loop is running count: uvicorn's own frames sit at the root of every stack.
    dispatch = next((i for i, (func, file) in enumerate(parsed) if func == "_run" and file == "asyncio/events.py"), 0)
    for _func, file in parsed[:dispatch]:
        for label, prefix in PACKAGES:
            if file.startswith(prefix) or f"/{prefix}" in file:
                return label
    return LOOP


def summarise_profile(raw: str, rate_hz: int, seconds: float) -> dict[str, Any]:
    """py-spy's raw stacks (with `--threads`) → shares of the event loop thread's samples by step and function."""
    main = 0
    other_threads: collections.Counter[str] = collections.Counter()
    by_step: collections.Counter[str] = collections.Counter()
    self_func: collections.Counter[str] = collections.Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        thread, _, rest = stack.partition(";")
        frames = [f for f in rest.split(";") if f]
        if not thread.endswith(": MainThread"):
            other_threads[thread.split(": ", 1)[-1]] += count
            continue
        if not frames:
            continue
        main += count
        by_step[classify(frames)] += count
        self_func[frames[-1]] += count

    def share(counter: collections.Counter[str], top: int) -> list[dict[str, Any]]:
        return [{"name": k, "samples": v, "share": v / main} for k, v in counter.most_common(top)] if main else []

    return {
        "main_thread_samples": main,
        "main_thread_active": main / (rate_hz * seconds),
        "other_thread_samples": dict(other_threads),
        "by_step": share(by_step, 30),
        "self_top_functions": share(self_func, 25),
    }


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    runs = report["runs"]
    closed = [r for r in runs if r["target"] == "POST /hooks/gitlab" and r["mode"] == "closed" and not r["warmup"]]
    opened = [r for r in runs if r["target"] == "POST /hooks/gitlab" and r["mode"] == "open"]
    best = max((r["rate"] for r in closed), default=0.0)
    at_rate = opened[0] if opened else None
    rate_held = at_rate is not None and at_rate["rate"] >= 0.98 * at_rate["offered_rate"]
    p99 = at_rate["latency_ms"]["p99"] if at_rate else math.nan
    lost = [r["run"] for r in runs if r.get("loss_check") and not r["loss_check"]["nothing_lost"]]
    return {
        "saturation_rate": best,
        "throughput_target": TARGET_RATE,
        "throughput_met": best >= TARGET_RATE,
        "offered_rate": report["settings"]["rate"],
        "rate_held": rate_held,
        "p99_ms_at_rate": p99,
        "p99_target_ms": TARGET_P99_MS,
        "latency_met": bool(rate_held and p99 < TARGET_P99_MS and report["settings"]["rate"] >= TARGET_RATE),
        "runs_with_loss": lost,
        "nothing_lost": not lost,
    }


def print_report(report: dict[str, Any]) -> None:
    env, st = report["environment"], report["server"]
    print()
    print(
        f"receiver on 127.0.0.1, uvicorn {st['uvicorn']} ({st['loop']} loop, {st['http']} HTTP), 1 worker pinned to "
        f"cpu {env['server_cpu']}; load on cpu {env['client_cpu']}; {env['cpu_count']} cpus; body "
        f"{report['settings']['body_bytes']:,} B, {report['settings']['projects']} projects"
    )
    la0, la1 = env["load_average_at_start"], env["load_average_at_end"]
    print(
        f"load average at start {la0[0]:.2f} {la0[1]:.2f} {la0[2]:.2f}, at end {la1[0]:.2f} {la1[1]:.2f} {la1[2]:.2f}"
    )
    print()
    head = (
        f"{'run':<36}{'gen':>7}{'req/s':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
        f"{'srv cpu':>8}{'srv us':>8}{'pg us':>7}{'rds us':>7}{'cpu0/1 %':>10}  lost?"
    )
    print(head)
    for r in report["runs"]:
        lat = r["latency_ms"]
        per = r.get("cpu_us_per_request", {})
        busy = r["cpu"]["machine_busy"]
        loss = r.get("loss_check")
        lost = "-" if loss is None else ("none" if loss["nothing_lost"] else "LOST")
        if loss is not None and loss.get("unanswered"):
            lost += f" ({loss['unanswered']} unans.)"
        print(
            f"{r['run']:<36}{r['generator']:>7}{r['rate']:>9,.0f}{lat['p50']:>9.2f}{lat['p90']:>9.2f}{lat['p99']:>9.2f}"
            f"{lat['max']:>9.1f}{r.get('server_core_utilisation', math.nan) * 100:>7.0f}%"
            f"{per.get('server', math.nan):>8.0f}{per.get('postgres_backends', math.nan):>7.0f}"
            f"{per.get('redis', math.nan):>7.0f}"
            f"{busy.get('cpu0', math.nan) * 100:>5.0f}/{busy.get('cpu1', math.nan) * 100:<4.0f}  {lost}"
        )
    print(
        "\n(srv cpu: the server process's share of one core; srv/pg/rds us: CPU microseconds per request in the "
        "server, in our database's PostgreSQL backends and in redis-server; cpu0/1: whole-machine busy share of each "
        "core, other processes included; 'unans.': recorded deliveries whose answer wrk abandoned at its stop; the "
        "warm-up's pg column misses the backends the server opened during it)"
    )
    for r in report["runs"]:
        if "send_lag_ms" in r:
            lag = r["send_lag_ms"]
            print(
                f"{r['run']}: generator send lag p50 {lag['p50']:.2f} ms, p99 {lag['p99']:.2f} ms, "
                f"max {lag['max']:.1f} ms"
            )
        if r.get("overload"):
            print(f"{r['run']}: OVERLOADED, {r['overload']}")
        if r["errors"]:
            print(f"{r['run']}: {r['errors']} errors {r['error_samples']}")
        loss = r.get("loss_check")
        if loss is not None:
            print(
                f"{r['run']}: 202 x {loss['answered_202']:,}; rows {loss['deliveries_rows']:,}, "
                f"sum(requested_gen) {loss['requested_gen_sum']:,}, arq:job:sync:* {loss['arq_job_keys']:,}, "
                f"queue {loss['arq_queue_zcard']:,}"
                + (f", keys missing {loss['keys_missing']}" if "keys_missing" in loss else "")
                + (f"  PROBLEMS: {loss['problems']}" if loss["problems"] else "")
            )
    total = report["totals"]
    print(
        f"\nall runs: deliveries rows {total['deliveries']:,}, sum(requested_gen) {total['gen_sum']:,}, "
        f"arq:job:sync:* {total['job_keys']:,}, queue {total['queued']:,}, projects {total['projects']}"
    )
    gen = report["generator_choice"]
    print(f"generator: {gen['reason']}")
    v = report["verdict"]
    print()
    print(
        f"throughput: best closed-loop {v['saturation_rate']:,.0f} deliveries/s "
        f"(target >= {v['throughput_target']:,.0f}): {'MET' if v['throughput_met'] else 'MISSED'}"
    )
    print(
        f"latency at {v['offered_rate']:,.0f}/s offered: p99 {v['p99_ms_at_rate']:.2f} ms "
        f"(target < {v['p99_target_ms']:.0f} ms), rate held: {v['rate_held']}: "
        f"{'MET' if v['latency_met'] else 'MISSED'}"
    )
    print(f"nothing lost: {'yes' if v['nothing_lost'] else 'NO: ' + ', '.join(v['runs_with_loss'])}")
    prof = report.get("profile")
    if prof:
        print_profile(prof)


def print_profile(prof: dict[str, Any]) -> None:
    if "error" in prof:
        print(f"\nprofile: {prof['error']}")
        return
    load = prof["load_during_profile"]
    print(
        f"\npy-spy on the server, {PROFILE_S} s at {PROFILE_HZ} Hz under closed-loop hooks ({load['rate']:,.0f} req/s, "
        f"p99 {load['latency_ms']['p99']:.1f} ms while sampled): event loop thread active in "
        f"{prof['main_thread_active'] * 100:.0f}% of samples; server CPU {load['server_cpu_us_per_request']:.0f} us "
        "per delivery, split by where the event loop thread was:"
    )
    for item in prof["by_step"]:
        print(f"  {item['share'] * 100:5.1f}%  {item['server_cpu_us_per_request']:6.0f} us  {item['name']}")
    print("  top functions by self share (innermost Python frame; C calls are inside it):")
    for item in prof["self_top_functions"][:15]:
        print(f"  {item['share'] * 100:5.1f}%  {item['name']}")
