"""Load the GitLab webhook receiver on loopback: throughput, latency, and that no delivery is lost.

Run from the repository root:

    .venv/bin/python -m bench.receiver_load                                   # 10 s per run, 32 connections
    .venv/bin/python -m bench.receiver_load --seconds 5 --json bench/results/receiver_load.json

The real application (`app.web.create_app`, settings from `JAVAKB_*` variables) runs under uvicorn in a
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
`tests.support.payloads.system_hook_push()`), each with a unique `Idempotency-Key`, spread over
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
import collections
import contextlib
import hashlib
import json
import math
import os
import platform
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Final

import asyncpg
import psycopg
import uvloop
from psycopg import sql
from redis.asyncio import Redis
from starlette.applications import Starlette

from tests.support.payloads import system_hook_push

PG_SERVER: Final = "postgresql://root@127.0.0.1:5432"
REDIS_SERVER: Final = "redis://127.0.0.1:6379"
HOST: Final = "127.0.0.1"
TOKEN: Final = "bench-webhook-secret"
TARGET_RATE: Final = 2000.0
TARGET_P99_MS: Final = 10.0
WARMUP_S: Final = 2.0
PROFILE_S: Final = 5
PROFILE_HZ: Final = 200
READY_TIMEOUT_S: Final = 60.0
DRAIN_TIMEOUT_S: Final = 30.0
MAX_BACKLOG_S: Final = 1.0  # an open-loop run stops its schedule when this many seconds of arrivals wait
MARKS: Final = ("@@PID@@", "@@PATH@@", "@@BEFORE@@", "@@AFTER@@")
CLK_TCK: Final = os.sysconf("SC_CLK_TCK")


def app_factory() -> Starlette:
    """What uvicorn runs in the server process (`--factory`): the real app, settings from `JAVAKB_*`."""
    from app.logs import configure_logging
    from app.settings import Settings
    from app.web import create_app

    settings = Settings()
    configure_logging(settings.log_level)
    return create_app(settings)


# --------------------------------------------------------------------------------------------------- bodies


@dataclass(frozen=True, slots=True)
class BodyTemplate:
    """A push body cut at the values that change per request: text, mark, text, mark, ..., text."""

    segments: tuple[str, ...]
    marks: tuple[str, ...]
    size: int

    @classmethod
    def load(cls, path: Path | None) -> BodyTemplate:
        """From a push body in a file, or without one the suite's own system-hook push."""
        body: dict[str, Any] = (
            json.loads(path.read_text(encoding="utf-8")) if path is not None else dict(system_hook_push())
        )
        body["project_id"] = 0  # replaced below by the marks
        body["before"] = MARKS[2]
        body["after"] = body["checkout_sha"] = MARKS[3]
        project = dict(body.get("project") or {})
        project["path_with_namespace"] = MARKS[1]
        body["project"] = project
        # Compact, as GitLab sends it (Ruby's to_json).
        text = json.dumps(body, separators=(",", ":")).replace('"project_id":0', f'"project_id":{MARKS[0]}')
        parts = re.split("(" + "|".join(re.escape(m) for m in MARKS) + ")", text)
        template = cls(tuple(parts[0::2]), tuple(parts[1::2]), len(text.encode()))
        if set(template.marks) != set(MARKS):
            raise SystemExit(f"error: {path} is not a push body with project_id and project.path_with_namespace")
        return template

    def render(self, values: dict[str, str]) -> bytes:
        out = [self.segments[0]]
        for mark, segment in zip(self.marks, self.segments[1:], strict=True):
            out.append(values[mark])
            out.append(segment)
        return "".join(out).encode()


def project_path(project_id: int) -> str:
    return f"bench/service-{project_id:04d}"


class RequestMaker:
    """Raw HTTP/1.1 requests for the Python generator: unique key per delivery, ids spread over projects."""

    def __init__(self, template: BodyTemplate, projects: int, prefix: str, port: int) -> None:
        self.template = template
        self.projects = projects
        self.prefix = prefix
        self.host = f"{HOST}:{port}"
        self.count = 0
        self.healthz = f"GET /healthz HTTP/1.1\r\nHost: {self.host}\r\nUser-Agent: javakb-bench\r\n\r\n".encode()

    def hook(self) -> tuple[str, bytes]:
        self.count += 1
        n = self.count
        key = f"{self.prefix}-{n}"
        project_id = (n * 7) % self.projects + 1
        after = hashlib.sha1(key.encode()).hexdigest()
        body = self.template.render(
            {MARKS[0]: str(project_id), MARKS[1]: project_path(project_id), MARKS[2]: "0" * 40, MARKS[3]: after}
        )
        head = (
            f"POST /hooks/gitlab HTTP/1.1\r\nHost: {self.host}\r\nUser-Agent: GitLab/17.5.0\r\n"
            f"Content-Type: application/json\r\nX-Gitlab-Event: System Hook\r\nX-Gitlab-Token: {TOKEN}\r\n"
            f"X-Gitlab-Instance: https://gitlab.example.com\r\nX-Gitlab-Webhook-UUID: {key}\r\n"
            f"Idempotency-Key: {key}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return key, head.encode() + body

    def health(self) -> tuple[str, bytes]:
        self.count += 1
        return "", self.healthz


# --------------------------------------------------------------------------------------------------- python generator


@dataclass(slots=True)
class Tally:
    """What a load generator saw."""

    generator: str
    sent: int = 0
    answered: int = 0
    errors: int = 0
    wall_s: float = 0.0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    latencies_ms: list[float] = field(default_factory=list)
    send_lag_ms: list[float] = field(default_factory=list)
    keys_202: list[str] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)
    percentiles_ms: dict[str, float] | None = None  # given by wrk (it keeps no list)
    overload: str | None = None  # why an open-loop schedule stopped early

    def error(self, exc: BaseException) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(f"{type(exc).__name__}: {exc}")


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> int:
    """Send one request on a kept-alive connection and read its whole response; return the status."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lower = head.lower()
    at = lower.find(b"\r\ncontent-length:")
    if at < 0:
        raise ValueError("response without content-length")
    end = lower.index(b"\r\n", at + 2)
    length = int(lower[at + 17 : end])
    if length:
        await reader.readexactly(length)
    return status


def record(tally: Tally, key: str, status: int, latency_s: float) -> None:
    tally.answered += 1
    tally.statuses[status] += 1
    tally.latencies_ms.append(latency_s * 1e3)
    if status == 202 and key:
        tally.keys_202.append(key)


async def closed_loop(port: int, make: Callable[[], tuple[str, bytes]], concurrency: int, seconds: float) -> Tally:
    """Each connection sends its next request as soon as the previous one is answered, until time is up."""
    tally = Tally(generator="python")
    clock = time.perf_counter
    start = clock()
    deadline = start + seconds

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            while clock() < deadline:
                key, request = make()
                tally.sent += 1
                t0 = clock()
                status = await exchange(reader, writer, request)
                record(tally, key, status, clock() - t0)
        finally:
            writer.close()

    results = await asyncio.gather(*(connection() for _ in range(concurrency)), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            tally.error(result)
    tally.wall_s = clock() - start
    return tally


async def open_loop(
    port: int, make: Callable[[], tuple[str, bytes]], concurrency: int, rate: float, seconds: float
) -> Tally:
    """Arrivals on a fixed schedule of `rate`/s, each taken by a free connection; latency from the schedule."""
    tally = Tally(generator="python")
    clock = time.perf_counter
    total = int(rate * seconds)
    queue: asyncio.Queue[float | None] = asyncio.Queue()
    start = clock() + 0.05

    async def producer() -> None:
        produced = 0
        while produced < total:
            if queue.qsize() > rate * MAX_BACKLOG_S:
                tally.overload = (
                    f"schedule stopped after {clock() - start:.1f} s of {seconds:.0f} s: {queue.qsize():,} arrivals "
                    f"waited for a connection (more than {MAX_BACKLOG_S:.0f} s of backlog)"
                )
                break
            due_now = min(total, int((clock() - start) * rate) + 1)
            while produced < due_now:
                queue.put_nowait(start + produced / rate)
                produced += 1
            if produced < total:  # libuv timers tick in whole milliseconds: a shorter sleep would spin
                await asyncio.sleep(max(0.001, start + produced / rate - clock()))
        for _ in range(concurrency):
            queue.put_nowait(None)

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            while (due := await queue.get()) is not None:
                key, request = make()
                tally.sent += 1
                sent_at = clock()
                tally.send_lag_ms.append((sent_at - due) * 1e3)
                status = await exchange(reader, writer, request)
                record(tally, key, status, clock() - due)
        finally:
            writer.close()

    workers = [asyncio.create_task(connection()) for _ in range(concurrency)]
    await producer()
    await drain(workers, tally)
    tally.wall_s = clock() - start
    return tally


async def drain(workers: list[asyncio.Task[None]], tally: Tally) -> None:
    """Wait for the connections to answer what they took; give up after DRAIN_TIMEOUT_S."""
    done, pending = await asyncio.wait(workers, timeout=DRAIN_TIMEOUT_S)
    for task in pending:
        task.cancel()
    for task in done:
        exc = task.exception()
        if exc is not None:
            tally.error(exc)
    if pending:
        tally.error(TimeoutError(f"{len(pending)} connections still busy {DRAIN_TIMEOUT_S:.0f} s after the schedule"))


# --------------------------------------------------------------------------------------------------- wrk

WRK_LUA: Final = r"""
-- Generated by bench/receiver_load.py: one unique Idempotency-Key per request, statuses counted.
segs = { %(segments)s }
marks = { %(marks)s }
threads = {}
counter = 0
statuses = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  mode = args[1]
  prefix = args[2]
  projects = tonumber(args[3])
  token = args[4]
  host = args[5]
end

function request()
  counter = counter + 1
  if mode == "healthz" then
    return wrk.format("GET", "/healthz", { ["Host"] = host, ["User-Agent"] = "javakb-bench" })
  end
  local key = prefix .. "-" .. tid .. "-" .. counter
  local pid = (counter * 7) %% projects + 1
  local vals = {
    ["@@PID@@"] = tostring(pid),
    ["@@PATH@@"] = string.format("bench/service-%%04d", pid),
    ["@@BEFORE@@"] = string.rep("0", 40),
    ["@@AFTER@@"] = string.format("%%08x%%08x", tid, counter) .. string.rep("a", 24),
  }
  local parts = { segs[1] }
  for i = 1, #marks do
    parts[#parts + 1] = vals[marks[i]]
    parts[#parts + 1] = segs[i + 1]
  end
  local headers = {
    ["Host"] = host,
    ["User-Agent"] = "GitLab/17.5.0",
    ["Content-Type"] = "application/json",
    ["X-Gitlab-Event"] = "System Hook",
    ["X-Gitlab-Token"] = token,
    ["X-Gitlab-Instance"] = "https://gitlab.example.com",
    ["X-Gitlab-Webhook-UUID"] = key,
    ["Idempotency-Key"] = key,
  }
  return wrk.format("POST", "/hooks/gitlab", headers, table.concat(parts))
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local generated = 0
  local merged = {}
  for _, t in ipairs(threads) do
    generated = generated + t:get("counter")
    for k, v in pairs(t:get("statuses")) do merged[k] = (merged[k] or 0) + v end
  end
  local st = {}
  for k, v in pairs(merged) do st[#st + 1] = string.format('"%%d": %%d', k, v) end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"duration_us": %%d, "requests": %%d, "generated": %%d, "statuses": {%%s}, ' ..
    '"errors": {"connect": %%d, "read": %%d, "write": %%d, "status": %%d, "timeout": %%d}, ' ..
    '"p50_us": %%d, "p90_us": %%d, "p99_us": %%d, "max_us": %%d, "mean_us": %%f}\n',
    summary.duration, summary.requests, generated, table.concat(st, ", "),
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
"""


def lua_string(text: str) -> str:
    level = "=" * 3
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"


def write_wrk_script(template: BodyTemplate, folder: Path) -> Path:
    script = folder / "receiver_load.lua"
    # A long bracket drops a newline right after its opening, so a segment starting with one keeps it escaped.
    segments = ", ".join(
        f'"\\n" .. {lua_string(s[1:])}' if s.startswith("\n") else lua_string(s) for s in template.segments
    )
    marks = ", ".join(f'"{m}"' for m in template.marks)
    script.write_text(WRK_LUA % {"segments": segments, "marks": marks}, encoding="utf-8")
    return script


def run_wrk(
    script: Path, port: int, mode: str, prefix: str, projects: int, concurrency: int, seconds: float, cpu: int | None
) -> Tally:
    path = "/healthz" if mode == "healthz" else "/hooks/gitlab"
    cmd = [
        *taskset(cpu),
        "wrk", "-t1", f"-c{concurrency}", f"-d{max(1, round(seconds))}s", "--timeout", "5s",
        "-s", str(script), f"http://{HOST}:{port}{path}",
        "--", mode, prefix, str(projects), TOKEN, f"{HOST}:{port}",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("WRKJSON ")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed (status {proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}")
    data: dict[str, Any] = json.loads(line.removeprefix("WRKJSON "))
    statuses = collections.Counter({int(k): int(v) for k, v in data["statuses"].items()})
    errors = data["errors"]
    tally = Tally(
        generator="wrk",
        sent=int(data["generated"]),
        answered=int(data["requests"]),
        errors=int(errors["connect"] + errors["read"] + errors["write"] + errors["timeout"]),
        wall_s=data["duration_us"] / 1e6,
        statuses=statuses,
        percentiles_ms={
            "p50": data["p50_us"] / 1e3,
            "p90": data["p90_us"] / 1e3,
            "p99": data["p99_us"] / 1e3,
            "max": data["max_us"] / 1e3,
            "mean": data["mean_us"] / 1e3,
        },
    )
    if tally.errors:
        tally.error_samples.append(f"wrk socket errors: {errors}")
    return tally


# --------------------------------------------------------------------------------------------------- processes and CPU


def taskset(cpu: int | None) -> list[str]:
    return ["taskset", "-c", str(cpu)] if cpu is not None else []


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


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


# --------------------------------------------------------------------------------------------------- state checks


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


# --------------------------------------------------------------------------------------------------- runs


def percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100 * len(sorted_values)) - 1))
    return sorted_values[k]


def latency_summary(tally: Tally) -> dict[str, float]:
    if tally.percentiles_ms is not None:
        return dict(tally.percentiles_ms)
    values = sorted(tally.latencies_ms)
    return {
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": values[-1] if values else math.nan,
        "mean": sum(values) / len(values) if values else math.nan,
    }


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
            "latency_ms": latency_summary(tally),
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
            row["send_lag_ms"] = {"p50": percentile(lag, 50), "p99": percentile(lag, 99), "max": lag[-1]}
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


STEPS: Final = (  # (label, function, file) of the receiver's own steps; the deepest one on a stack wins
    ("enqueue: one MULTI per batch (app/queue.push_syncs)", "push_syncs", "app/queue.py"),
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


# --------------------------------------------------------------------------------------------------- report


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


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
        help="push body template (default: tests.support.payloads.system_hook_push)",
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


def pin_self(cpu: int) -> int | None:
    """Pin this process (the Python generator) to `cpu`; None when the machine has one core."""
    if (os.cpu_count() or 1) < 2:
        return None
    os.sched_setaffinity(0, {cpu})
    return cpu


@contextlib.contextmanager
def bench_database() -> Iterator[str]:
    """A fresh migrated database, dropped on exit."""
    from app.migrate import apply_migrations

    name = f"javakb_bench_{secrets.token_hex(4)}"
    dsn = f"{PG_SERVER}/{name}"
    try:
        apply_migrations(dsn)
        yield dsn
    finally:
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


async def our_backends(pool: asyncpg.Pool, dsn: str) -> list[int]:
    name = dsn.rsplit("/", 1)[1]
    rows = await pool.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name)
    return [int(r["pid"]) for r in rows]


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
            "payload": str(args.payload or "tests.support.payloads.system_hook_push"),
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
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    v = report["verdict"]
    return 0 if v["nothing_lost"] and v["throughput_met"] and v["latency_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
