"""The load generators of `bench.receiver_load`: push bodies made unique per request, the Python
closed- and open-loop clients over raw sockets, and wrk with a Lua script.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import math
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench.common import HOST, nearest_rank
from testkit.payloads import system_hook_push

TOKEN: Final = "bench-webhook-secret"


DRAIN_TIMEOUT_S: Final = 30.0


MAX_BACKLOG_S: Final = 1.0  # an open-loop run stops its schedule when this many seconds of arrivals wait


MARKS: Final = ("@@PID@@", "@@PATH@@", "@@BEFORE@@", "@@AFTER@@")


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
    latency:nearest_rank(50), latency:nearest_rank(90), latency:nearest_rank(99), latency.max, latency.mean))
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


def taskset(cpu: int | None) -> list[str]:
    return ["taskset", "-c", str(cpu)] if cpu is not None else []


def tally_latency(tally: Tally) -> dict[str, float]:
    if tally.percentiles_ms is not None:
        return dict(tally.percentiles_ms)
    values = sorted(tally.latencies_ms)
    return {
        "p50": nearest_rank(values, 50),
        "p90": nearest_rank(values, 90),
        "p99": nearest_rank(values, 99),
        "max": values[-1] if values else math.nan,
        "mean": sum(values) / len(values) if values else math.nan,
    }
