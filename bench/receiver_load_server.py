"""The server side of `bench.receiver_load`: the uvicorn subprocess, its CPU, and what PostgreSQL and
Redis hold before and after a run (nothing lost, nothing doubled).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import asyncpg
from redis.asyncio import Redis

from bench.common import HOST, free_port, version
from bench.receiver_load_gen import TOKEN, Tally, exchange, taskset

READY_TIMEOUT_S: Final = 60.0


CLK_TCK: Final = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def pids_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == name:
                    found.append(int(entry.name))
    return found


def cpu_busy() -> dict[str, tuple[int, int]]:
    """Per cpu (busy, total) jiffies from /proc/stat."""
    out: dict[str, tuple[int, int]] = {}
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name != "cpu":
            nums = [int(v) for v in values]
            idle = nums[3] + nums[4]
            out[name] = (sum(nums[:8]) - idle, sum(nums[:8]))
    return out


@dataclass(slots=True)
class CpuWatch:
    """CPU seconds used during a run by the server, our database's backends, Redis and the load generator."""

    server_pid: int
    backend_pids: list[int]
    redis_pids: list[int]
    marks: dict[str, float] = field(default_factory=dict)
    machine: dict[str, tuple[int, int]] = field(default_factory=dict)

    def _now(self) -> dict[str, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {
            "server": proc_cpu_s(self.server_pid),
            "postgres": sum(proc_cpu_s(p) for p in self.backend_pids),
            "redis": sum(proc_cpu_s(p) for p in self.redis_pids),
            "client_self": own.ru_utime + own.ru_stime,
            "client_children": kids.ru_utime + kids.ru_stime,
        }

    def start(self) -> None:
        self.marks = self._now()
        self.machine = cpu_busy()

    def stop(self, generator: str) -> dict[str, Any]:
        now = self._now()
        delta = {k: now[k] - self.marks[k] for k in now}
        client = delta["client_children"] if generator == "wrk" else delta["client_self"]
        machine = cpu_busy()
        busy = {
            cpu: (machine[cpu][0] - self.machine[cpu][0]) / max(1, machine[cpu][1] - self.machine[cpu][1])
            for cpu in machine
            if cpu in self.machine
        }
        return {
            "server_s": delta["server"],
            "postgres_backends_s": delta["postgres"],
            "redis_s": delta["redis"],
            "client_s": client,
            "machine_busy": busy,
        }


@dataclass
class Server:
    """The uvicorn subprocess."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    env: dict[str, str]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def start_server(args: argparse.Namespace, dsn: str, redis_url: str, queue: str, tmp: Path, cpu: int | None) -> Server:
    port = free_port()
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([*args.pythonpath, root, env.get("PYTHONPATH", "")]).strip(os.pathsep)
    env.update(
        {
            "JAVAKB_POSTGRES__DSN": dsn,
            "JAVAKB_REDIS__URL": redis_url,
            "JAVAKB_REDIS__QUEUE": queue,
            "JAVAKB_QDRANT__PATH": str(tmp / "qdrant"),
            "JAVAKB_GITLAB__WEBHOOK_SECRET": TOKEN,
            "JAVAKB_LOG_LEVEL": args.app_log_level,
            "PYTHONUNBUFFERED": "1",
        }
    )
    for name in ("JAVAKB_QDRANT__URL", "JAVAKB_GITLAB__SIGNING_TOKEN", "JAVAKB_EMBEDDING__BASE_URL"):
        env.pop(name, None)
    cmd = [
        *taskset(cpu),
        sys.executable, "-m", "uvicorn", "--factory", "bench.receiver_load:app_factory",
        "--host", HOST, "--port", str(port), "--workers", "1", "--no-access-log", "--log-level", "warning",
        *args.uvicorn_arg,
    ]  # fmt: skip
    log = tmp / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True)
    return Server(proc=proc, port=port, log=log, env=env)


async def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    request = f"GET /readyz HTTP/1.1\r\nHost: {HOST}:{server.port}\r\n\r\n".encode()
    last = ""
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.proc.returncode}:\n{server.log_tail()}")
        try:
            reader, writer = await asyncio.open_connection(HOST, server.port)
            try:
                status = await exchange(reader, writer, request)
            finally:
                writer.close()
            if status == 200:
                return
            last = f"/readyz answered {status}"
        except OSError as exc:
            last = str(exc)
        await asyncio.sleep(0.2)
    raise RuntimeError(f"the server was not ready after {READY_TIMEOUT_S:.0f} s ({last}):\n{server.log_tail()}")


def server_stack(env: dict[str, str]) -> dict[str, Any]:
    """What uvicorn's `auto` picks in the server's environment (uvloop/httptools when importable)."""
    code = (
        "import importlib.util as u, json, sys;"
        "print(json.dumps({m: u.find_spec(m) is not None for m in ('uvloop', 'httptools')}))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    found: dict[str, bool] = json.loads(out)
    return {
        "loop": "uvloop" if found["uvloop"] else "asyncio",
        "http": "httptools" if found["httptools"] else "h11",
        "uvicorn": version("uvicorn"),
        "starlette": version("starlette"),
        "asyncpg": version("asyncpg"),
        "redis": version("redis"),
        "arq": version("arq"),
    }


@dataclass(frozen=True, slots=True)
class Counts:
    deliveries: int
    not_enqueued: int
    gen_sum: int
    job_keys: int
    queued: int


async def read_counts(pool: asyncpg.Pool, redis: Redis, queue: str) -> Counts:
    rows = await pool.fetchval("SELECT count(*) FROM deliveries")
    other = await pool.fetchval("SELECT count(*) FROM deliveries WHERE outcome <> 'enqueued'")
    gen_sum = await pool.fetchval("SELECT coalesce(sum(requested_gen), 0) FROM projects")
    keys = 0
    async for _ in redis.scan_iter(match="arq:job:sync:*", count=10_000):
        keys += 1
    queued = await redis.zcard(queue)
    return Counts(int(rows), int(other), int(gen_sum), keys, int(queued))


async def settled_counts(pool: asyncpg.Pool, redis: Redis, queue: str, limit_s: float = 10.0) -> Counts:
    """Counts once they stop moving: requests a client abandoned may still be finishing in the server."""
    last = await read_counts(pool, redis, queue)
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        await asyncio.sleep(0.3)
        now = await read_counts(pool, redis, queue)
        if now == last:
            return now
        last = now
    return last


async def recorded_keys(pool: asyncpg.Pool, prefix: str) -> set[str]:
    rows = await pool.fetch("SELECT idempotency_key FROM deliveries WHERE idempotency_key LIKE $1", prefix + "-%")
    return {str(r["idempotency_key"]) for r in rows}


def loss_check(tally: Tally, before: Counts, after: Counts, recorded: set[str] | None, bound: int) -> dict[str, Any]:
    """The deliveries answered 202 against what PostgreSQL and Redis hold (deltas over the run).

    Lost: a delivery answered 202 that is not recorded, or recorded without its generation bump or its arq
    job. Not lost: a delivery recorded whose answer the client gave up on (wrk's stop, a drain timeout); GitLab
    would resend it and get `duplicate`. Those are `unanswered`, bounded by the requests abandoned.
    """
    ok = tally.statuses.get(202, 0)
    rows = after.deliveries - before.deliveries
    abandoned = bound if tally.generator == "wrk" else tally.sent - tally.answered
    check: dict[str, Any] = {
        "answered_202": ok,
        "other_statuses": {str(k): v for k, v in sorted(tally.statuses.items()) if k != 202},
        "deliveries_rows": rows,
        "requested_gen_sum": after.gen_sum - before.gen_sum,
        "arq_job_keys": after.job_keys - before.job_keys,
        "arq_queue_zcard": after.queued - before.queued,
        "not_enqueued_rows": after.not_enqueued - before.not_enqueued,
        "unanswered": rows - ok,
        "abandoned_bound": abandoned,
        "client_errors": tally.errors,
    }
    problems = []
    if check["other_statuses"]:
        problems.append(f"non-202 answers {check['other_statuses']}")
    for name in ("requested_gen_sum", "arq_job_keys", "arq_queue_zcard"):
        if check[name] != rows:
            problems.append(f"{name} {check[name]} != deliveries rows {rows}")
    if check["not_enqueued_rows"]:
        problems.append(f"{check['not_enqueued_rows']} rows not 'enqueued'")
    if not 0 <= rows - ok <= abandoned:
        problems.append(f"rows - 202 = {rows - ok}, outside [0, {abandoned}] (the requests whose answer was abandoned)")
    if recorded is not None:
        answered = set(tally.keys_202)
        missing, extra = answered - recorded, recorded - answered
        check["keys_missing"] = len(missing)
        check["keys_recorded_unanswered"] = len(extra)
        if missing or len(answered) != len(tally.keys_202):
            problems.append(f"{len(missing)} keys answered 202 but not recorded")
    check["problems"] = problems
    check["nothing_lost"] = not problems
    return check


def pin_self(cpu: int) -> int | None:
    """Pin this process (the Python generator) to `cpu`; None when the machine has one core."""
    if (os.cpu_count() or 1) < 2:
        return None
    os.sched_setaffinity(0, {cpu})
    return cpu


async def our_backends(pool: asyncpg.Pool, dsn: str) -> list[int]:
    name = dsn.rsplit("/", 1)[1]
    rows = await pool.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name)
    return [int(r["pid"]) for r in rows]
