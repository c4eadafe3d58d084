"""Load the GitLab webhook receiver on loopback: throughput, latency, and that no delivery is lost.

Run from the repository root:

    .venv/bin/python -m bench.receiver_load                                   # 10 s per run, 32 connections
    .venv/bin/python -m bench.receiver_load --seconds 5 --json bench/results/receiver_load.json

The real application (`entry.web.create_app`, settings from `JAVAKB_*` variables) runs under uvicorn in a
subprocess pinned to one core (`taskset -c 0`, one worker, no access log, log level warning), against a
database made for this run (`javakb_bench_<random>`, dropped at the end), a Redis database index that must
be empty (flushed at the end) and an embedded Qdrant folder in a temporary directory. The load comes from
the other core (this process is pinned there, and so is wrk):

1. warm-up: POST /hooks/gitlab for 2 s (counted in the loss check, not in the numbers);
2. GET /healthz, closed loop, with wrk and with our Python generator: the floor of Starlette + uvicorn
   itself, and which generator pushes harder;
3. POST /hooks/gitlab, closed loop (each connection sends its next request when the previous one is
   answered), with wrk and with the Python generator: the saturation throughput;
4. POST /hooks/gitlab, open loop at `--rate` requests/s (arrivals on a fixed schedule, spread over up to
   `--concurrency` connections; latency counts from the scheduled time, so a slow server is not hidden by
   the generator waiting for it), and the same for GET /healthz: the latency at the target rate;
5. when a target is missed (or with `--profile always`), py-spy samples the server for 5 s under a
   closed-loop load and the profile is summarised by package and by function.

Bodies are GitLab system-hook push events built from `--payload` (default: the suite's own
`testkit.payloads.system_hook_push()`), each with a unique `Idempotency-Key`, spread over
`--projects` project ids, with a fresh `after` sha. After every hook run, NOTHING LOST is checked: the rows
of `deliveries`, the sum of `projects.requested_gen` and the arq jobs in Redis (`arq:job:sync:*` keys and
the queue's sorted set) each grow by exactly the number of 202 answers; for the Python generator the keys
answered 202 are also compared one by one with the recorded keys. wrk abandons the requests in flight when
its time is up, so for wrk the server may have recorded up to `--concurrency` deliveries more than it
answered; those are reported as `unanswered` (recorded, never answered), never as lost.

To see what uvicorn's C speed-ups would change without touching the venv: `pip install --target DIR uvloop
httptools`, then `--pythonpath DIR` (uvicorn's `auto` picks them up; the report names the loop and parser used).

Exit status: 0 when nothing was lost and both targets (>= 2,000 deliveries/s, p99 < 10 ms at that rate)
are met, 1 when something was lost or a target was missed, 2 on bad arguments or a missing service.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import asyncpg
import psycopg
import uvloop
from redis.asyncio import Redis
from starlette.applications import Starlette

from bench.common import REDIS_SERVER, bench_database, nearest_rank, write_json
from bench.receiver_load_gen import (
    BodyTemplate,
    RequestMaker,
    closed_loop,
    open_loop,
    run_wrk,
    tally_latency,
    write_wrk_script,
)
from bench.receiver_load_report import PROFILE_HZ, PROFILE_S, TARGET_RATE, print_report, summarise_profile, verdict
from bench.receiver_load_server import (
    CpuWatch,
    Server,
    loss_check,
    our_backends,
    pids_named,
    pin_self,
    read_counts,
    recorded_keys,
    server_stack,
    settled_counts,
    start_server,
    wait_ready,
)

WARMUP_S: Final = 2.0


def app_factory() -> Starlette:
    """What uvicorn runs in the server process (`--factory`): the real app, settings from `JAVAKB_*`."""
    from app.core.logs import configure_logging
    from app.core.settings import Settings
    from entry.web import create_app

    settings = Settings()
    configure_logging(settings.log_level)
    return create_app(settings)


# --------------------------------------------------------------------------------------------------- bodies


# --------------------------------------------------------------------------------------------------- python generator


# --------------------------------------------------------------------------------------------------- wrk


# --------------------------------------------------------------------------------------------------- processes and CPU


# --------------------------------------------------------------------------------------------------- state checks


# --------------------------------------------------------------------------------------------------- runs


@dataclass
class Bench:
    """Everything the runs share."""

    args: argparse.Namespace
    server: Server
    pool: asyncpg.Pool
    redis: Redis
    queue: str
    template: BodyTemplate
    script: Path
    run_id: str
    client_cpu: int | None
    backend_pids: list[int]
    runs: list[dict[str, Any]] = field(default_factory=list)
    phase: int = 0

    def watch(self) -> CpuWatch:
        return CpuWatch(self.server.pid, self.backend_pids, pids_named("redis-server"))

    async def run(
        self, name: str, target: str, generator: str, mode: str, seconds: float, *, keep: bool = True
    ) -> dict[str, Any]:
        self.phase += 1
        prefix = f"{self.run_id}-p{self.phase}"
        hook = target == "hook"
        before = await read_counts(self.pool, self.redis, self.queue) if hook else None
        maker = RequestMaker(self.template, self.args.projects, prefix, self.server.port)
        make = maker.hook if hook else maker.health
        watch = self.watch()
        print(f"  {name} ...", file=sys.stderr, flush=True)
        watch.start()
        if generator == "wrk":
            tally = await asyncio.to_thread(
                run_wrk, self.script, self.server.port, "hook" if hook else "healthz", prefix,
                self.args.projects, self.args.concurrency, seconds, self.client_cpu,
            )  # fmt: skip
        elif mode == "closed":
            tally = await closed_loop(self.server.port, make, self.args.concurrency, seconds)
        else:
            tally = await open_loop(self.server.port, make, self.args.concurrency, self.args.rate, seconds)
        cpu = watch.stop(generator)
        if self.server.proc.poll() is not None:
            raise RuntimeError(f"the server died during {name}:\n{self.server.log_tail()}")
        row: dict[str, Any] = {
            "run": name,
            "warmup": name.startswith("warm-up"),
            "target": "POST /hooks/gitlab" if hook else "GET /healthz",
            "generator": generator,
            "mode": mode,
            "concurrency": self.args.concurrency,
            "offered_rate": self.args.rate if mode == "open" else None,
            "seconds": tally.wall_s,
            "sent": tally.sent,
            "answered": tally.answered,
            "rate": tally.answered / tally.wall_s if tally.wall_s else 0.0,
            "latency_ms": tally_latency(tally),
            "errors": tally.errors,
            "error_samples": tally.error_samples,
            "overload": tally.overload,
            "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
            "cpu": cpu,
        }
        if tally.answered:
            row["cpu_us_per_request"] = {
                "server": cpu["server_s"] / tally.answered * 1e6,
                "postgres_backends": cpu["postgres_backends_s"] / tally.answered * 1e6,
                "redis": cpu["redis_s"] / tally.answered * 1e6,
                "client": cpu["client_s"] / tally.answered * 1e6,
            }
            row["server_core_utilisation"] = cpu["server_s"] / tally.wall_s if tally.wall_s else math.nan
        if tally.send_lag_ms:
            lag = sorted(tally.send_lag_ms)
            row["send_lag_ms"] = {"p50": nearest_rank(lag, 50), "p99": nearest_rank(lag, 99), "max": lag[-1]}
        if hook and before is not None:
            after = await settled_counts(self.pool, self.redis, self.queue)
            recorded = await recorded_keys(self.pool, prefix) if generator == "python" else None
            row["loss_check"] = loss_check(tally, before, after, recorded, self.args.concurrency)
        if keep:
            self.runs.append(row)
        return row


async def profile(bench: Bench, folder: Path) -> dict[str, Any]:
    """py-spy on the server for PROFILE_S seconds under a closed-loop hook load; summarised."""
    out = folder / "receiver.pyspy.txt"
    cmd = [
        str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(bench.server.pid), "-d", str(PROFILE_S),
        "-r", str(PROFILE_HZ), "--threads", "-f", "raw", "-o", str(out),
    ]  # fmt: skip
    spy = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    await asyncio.sleep(0.5)
    row = await bench.run("hooks closed, under py-spy", "hook", "python", "closed", PROFILE_S + 1.0, keep=False)
    spy_out, _ = await spy.communicate()
    if spy.returncode != 0 or not out.exists():
        return {"error": f"py-spy failed ({spy.returncode}): {spy_out.decode(errors='replace').strip()[-500:]}"}
    summary = summarise_profile(out.read_text(encoding="utf-8", errors="replace"), PROFILE_HZ, PROFILE_S)
    server_us = row.get("cpu_us_per_request", {}).get("server", math.nan)
    for item in summary["by_step"]:
        item["server_cpu_us_per_request"] = item["share"] * server_us
    summary["load_during_profile"] = {
        "rate": row["rate"],
        "latency_ms": row["latency_ms"],
        "server_cpu_us_per_request": server_us,
        "cpu_us_per_request": row.get("cpu_us_per_request"),
    }
    summary["loss_check"] = row.get("loss_check")
    if bench.args.keep_profile is not None:
        bench.args.keep_profile.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, bench.args.keep_profile)
        summary["raw_file"] = str(bench.args.keep_profile)
    return summary


# --------------------------------------------------------------------------------------------------- report


# --------------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.receiver_load", description="Load the webhook receiver on loopback; check nothing lost."
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each hook run (default: 10)")
    parser.add_argument("--healthz-seconds", type=float, default=5.0, help="length of each /healthz run (default: 5)")
    parser.add_argument("--concurrency", type=int, default=32, help="connections (default: 32)")
    parser.add_argument("--projects", type=int, default=200, help="project ids the deliveries spread over (200)")
    parser.add_argument("--rate", type=float, default=TARGET_RATE, help="open-loop arrivals/s (default: 2000)")
    parser.add_argument(
        "--payload",
        type=Path,
        default=None,
        help="push body template (default: testkit.payloads.system_hook_push)",
    )
    parser.add_argument("--redis-db", type=int, default=14, help="an EMPTY Redis database index (default: 14)")
    parser.add_argument("--server-cpu", type=int, default=0, help="core of the server (default: 0)")
    parser.add_argument("--client-cpu", type=int, default=1, help="core of the load generators (default: 1)")
    parser.add_argument("--generators", choices=("both", "wrk", "python"), default="both", help="closed-loop runs")
    parser.add_argument("--profile", choices=("auto", "always", "never"), default="auto", help="py-spy (auto)")
    parser.add_argument("--keep-profile", type=Path, default=None, metavar="PATH", help="keep py-spy's raw stacks")
    parser.add_argument("--app-log-level", default="WARNING", help="JAVAKB_LOG_LEVEL of the server (WARNING)")
    parser.add_argument(
        "--uvicorn-arg", action="append", default=[], metavar="ARG", help="extra uvicorn argument (repeatable)"
    )
    parser.add_argument(
        "--pythonpath", action="append", default=[], metavar="DIR", help="prepended to the server's PYTHONPATH"
    )
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.healthz_seconds <= 0 or args.seconds > 120 or args.healthz_seconds > 120:
        parser.error("--seconds and --healthz-seconds must be in (0, 120]")
    if not 1 <= args.concurrency <= 1000 or args.projects < 1 or not 0 < args.rate <= 50_000:
        parser.error("--concurrency in [1, 1000], --projects >= 1, --rate in (0, 50000]")
    if not 0 <= args.redis_db <= 15:
        parser.error("--redis-db in [0, 15]")
    if args.payload is not None and not args.payload.is_file():
        parser.error(f"{args.payload} not found (pass --payload with a GitLab system-hook push body)")
    if args.generators != "python" and shutil.which("wrk") is None:
        parser.error("wrk is not installed (apt-get install wrk), or pass --generators python")
    return args


async def run_all(args: argparse.Namespace, dsn: str, tmp: Path) -> dict[str, Any]:
    run_id = secrets.token_hex(4)
    queue = f"javakb:bench:{run_id}"
    redis_url = f"{REDIS_SERVER}/{args.redis_db}"
    redis = Redis.from_url(redis_url)
    try:
        if await redis.dbsize():
            raise SystemExit(f"error: Redis database {args.redis_db} is not empty; pass another --redis-db")
        template = BodyTemplate.load(args.payload)
        server_cpu = args.server_cpu if (os.cpu_count() or 1) >= 2 else None
        client_cpu = pin_self(args.client_cpu)
        server = start_server(args, dsn, redis_url, queue, tmp, server_cpu)
        try:
            await wait_ready(server)
            pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
            try:
                backends = await our_backends(pool, dsn)  # the server's pool; refreshed after the warm-up
                bench = Bench(
                    args, server, pool, redis, queue, template, write_wrk_script(template, tmp), run_id, client_cpu,
                    backends,
                )  # fmt: skip
                return await measure(bench, server, dsn, tmp)
            finally:
                await pool.close()
        finally:
            server.stop()
            if server.proc.returncode not in (0, -signal.SIGINT):
                print(f"note: the server exited with {server.proc.returncode}:\n{server.log_tail()}", file=sys.stderr)
    finally:
        with contextlib.suppress(Exception):
            await redis.flushdb()
        await redis.aclose()


async def measure(bench: Bench, server: Server, dsn: str, tmp: Path) -> dict[str, Any]:
    args = bench.args
    la_start = os.getloadavg()
    await bench.run("warm-up hooks", "hook", "python", "closed", WARMUP_S)
    bench.backend_pids = await our_backends(bench.pool, dsn)
    gens = ["wrk", "python"] if args.generators == "both" else [args.generators]
    for gen in gens:
        await bench.run(f"healthz closed ({gen})", "healthz", gen, "closed", args.healthz_seconds)
    for gen in gens:
        await bench.run(f"hooks closed ({gen})", "hook", gen, "closed", args.seconds)
    await bench.run(f"hooks open @ {args.rate:,.0f}/s", "hook", "python", "open", args.seconds)
    await bench.run(f"healthz open @ {args.rate:,.0f}/s", "healthz", "python", "open", args.healthz_seconds)
    totals = await read_counts(bench.pool, bench.redis, bench.queue)
    projects = await bench.pool.fetchval("SELECT count(*) FROM projects")
    report: dict[str, Any] = {
        "settings": {
            "seconds": args.seconds,
            "healthz_seconds": args.healthz_seconds,
            "concurrency": args.concurrency,
            "projects": args.projects,
            "rate": args.rate,
            "payload": str(args.payload or "testkit.payloads.system_hook_push"),
            "body_bytes": bench.template.size,
            "redis_db": args.redis_db,
            "app_log_level": args.app_log_level,
            "uvicorn_args": args.uvicorn_arg,
            "pythonpath": args.pythonpath,
        },
        "server": server_stack(server.env),
        "environment": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "server_cpu": args.server_cpu,
            "client_cpu": bench.client_cpu,
            "load_average_at_start": la_start,
            "load_average_at_end": os.getloadavg(),
            "platform": f"{os.uname().sysname} {os.uname().release} {os.uname().machine}",
            "wrk": shutil.which("wrk"),
            "postgres_synchronous_commit": await bench.pool.fetchval("SHOW synchronous_commit"),
        },
        "runs": bench.runs,
        "totals": {
            "deliveries": totals.deliveries,
            "gen_sum": totals.gen_sum,
            "job_keys": totals.job_keys,
            "queued": totals.queued,
            "projects": int(projects),
        },
    }
    report["generator_choice"] = generator_choice(bench.runs)
    report["verdict"] = verdict(report)
    missed = not (report["verdict"]["throughput_met"] and report["verdict"]["latency_met"])
    if args.profile == "always" or (args.profile == "auto" and missed):
        report["profile"] = await profile(bench, tmp)
    report["environment"]["load_average_at_end"] = os.getloadavg()
    return report


def generator_choice(runs: list[dict[str, Any]]) -> dict[str, Any]:
    closed = [r for r in runs if r["mode"] == "closed" and not r["warmup"]]
    rates = {f"{r['target']} {r['generator']}": r["rate"] for r in closed}
    client_us = {f"{r['target']} {r['generator']}": r.get("cpu_us_per_request", {}).get("client") for r in closed}
    hz = {g: rates.get(f"GET /healthz {g}") for g in ("wrk", "python")}
    cost = {g: client_us.get(f"GET /healthz {g}") for g in ("wrk", "python")}
    if hz["wrk"] is None or hz["python"] is None or cost["wrk"] is None or cost["python"] is None:
        reason = "one generator only (see --generators)"
    else:
        reason = (
            f"on /healthz wrk drew {hz['wrk']:,.0f} req/s for {cost['wrk']:.0f} us of client CPU per request, the "
            f"Python generator {hz['python']:,.0f} req/s for {cost['python']:.0f} us: both saturate the server, and "
            "wrk leaves more of the client core to PostgreSQL and Redis, so it is the closed-loop reference; the "
            "fixed-rate runs use the Python generator because wrk 4 has no rate control (wrk2's -R is not "
            "packaged) and it drains its requests in flight, so every key answered 202 is checked in PostgreSQL"
        )
    return {"closed_loop_rates": rates, "client_cpu_us_per_request": client_us, "reason": reason}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="javakb-bench-receiver-"))
    try:
        # The Python generator runs on uvloop, as the server does: on the default loop its own
        # scheduling lag (p99 ~4 ms at 2,000/s) was charged to every latency.
        with bench_database() as dsn, asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            report = runner.run(run_all(args, dsn, tmp))
    except (OSError, psycopg.Error, asyncpg.PostgresError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_report(report)
    if args.json is not None:
        write_json(args.json, report)
        print(f"\nwrote {args.json}")
    v = report["verdict"]
    return 0 if v["nothing_lost"] and v["throughput_met"] and v["latency_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
