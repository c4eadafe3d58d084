"""Benchmark: `/healthz` latency while 8 clients run worst-case searches at 100k chunks (issue 24, "Load").

Run from the repository root, after `bench.mcp_latency --index-only` built the store (109,239 chunks):

    .venv/bin/python -m bench.healthz_under_load --qdrant-path /tmp/javakb-bench/mcp-latency
    .venv/bin/python -m bench.healthz_under_load --baseline ../wt-base --rounds 2   # main and this tree, paired

1. Server: a child process per run, as `javakb serve` answers: the real application (`entry.web.create_app` over
   `open_service` of the lexical store, with the default local PostgreSQL and Redis that the web app needs) under
   uvicorn on loopback, one event loop. `--baseline DIR`
   runs the same child from another checkout (its `.venv`, its `app`), so main and this tree are measured
   alternately in one run on one store. A service token reading everything; rate limits out of the way.
2. Load: `--clients` clients (8) each send worst-case searches back to back for `--seconds`: alternately
   REST `GET /api/v1/search` and MCP `semantic_search` (JSON-RPC over streamable HTTP), both with `scope=all`,
   the largest `limit` (50), a query of the most words allowed (64) that names methods and asks who calls
   two of them, and for MCP the deepest offset that still shows something (49) and the largest `max_chars`.
3. Meanwhile a thread polls `/healthz` at a steady `--poll-ms` (every answer's latency; a poll that is late
   is sent at once, never skipped) and the 1-minute load average is sampled every second.
4. `--hogs 0,1`: each run once with no CPU hog, and once with that many busy loops (`while True: pass`
   processes) competing for the machine's cores.

Reports, per tree and hog count: `/healthz` p50/p99/max, searches/s, search p50/p99, errors, load average.
Exit status 0, or 1 when a search failed (a non-200 answer or an MCP error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx

from bench.common import HOST, free_port, latency_summary, load_avg, log, write_json

DEFAULT_STORE: Final = Path("/tmp/javakb-bench/mcp-latency")
TOKEN: Final = "bench-healthz-under-load-token"  # a service token of this bench's own server, never stored
READY_TIMEOUT_S: Final = 180.0  # opening the 109k store and importing the service
LIMIT: Final = 50  # the largest limit both APIs accept
OFFSET: Final = LIMIT - 1  # the deepest MCP offset that still renders a result
MAX_CHARS: Final = 100_000  # MCP's largest output budget
# The JDK's most used names: each a lookup; the relation asks for the callers of every declaration of two bare
# methods (their hierarchy walked, thousands of payloads read). The costliest question found (300-450 ms of CPU).
NAMED: Final = (
    "who calls toString() and hashCode() in HashMap.get ArrayList.add String.equals StringBuilder.append "
    "List.iterator Map.put Integer.valueOf Objects.requireNonNull"
)
FILLER_TEXT: Final = (
    "where is the cached value of the current thread read before the lock is released and the buffer is "
    "flushed to the underlying stream when the collection changes size or a key is missing from the map"
)


def worst_query(words: int) -> str:
    """A question of exactly `words` words: the named methods and relation first, then plain words."""
    head = NAMED.split()
    words_of = FILLER_TEXT.split()
    filler = [words_of[i % len(words_of)] for i in range(max(0, words - len(head)))]
    return " ".join([*head, *filler][:words])


# --------------------------------------------------------------------------------------------------- the server


def serve(store_dir: Path, port: int) -> None:
    """Child process: the application over the lexical store at `store_dir`, on `port`, until killed."""
    import uvicorn

    from app.core.access_settings import AccessSettings, ServiceToken, token_digest
    from bench.mcp_latency_stores import lexical_settings
    from entry.deps import open_service
    from entry.web import create_app

    base = lexical_settings(store_dir)
    settings = base.model_copy(
        update={
            "service_tokens": [ServiceToken(name="bench", sha256=token_digest(TOKEN), repos=["*"])],
            "access": AccessSettings(rate_per_s=1e6, rate_burst=1_000_000),
        }
    )

    async def run() -> None:
        async with open_service(settings) as deps:
            await deps.store.ensure(await deps.index_model())
            app = create_app(settings, deps=deps)
            config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", lifespan="on")
            await uvicorn.Server(config).serve()

    asyncio.run(run())


@dataclass
class Server:
    """A server child process of one tree (this checkout, or `--baseline`)."""

    tree: Path
    store_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        python = self.tree / ".venv" / "bin" / "python"
        argv = [str(python), "-P", str(Path(__file__).resolve()), "--serve", str(self.port)]
        argv += ["--qdrant-path", str(self.store_dir)]
        env = {**os.environ, "PYTHONPATH": str(self.tree)}
        self.process = subprocess.Popen(argv, cwd=self.tree, env=env)
        deadline = time.monotonic() + READY_TIMEOUT_S
        with httpx.Client(timeout=5) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the server of {self.tree} exited with {self.process.returncode}")
                try:
                    if client.get(f"{self.url}/healthz").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
        raise RuntimeError(f"the server of {self.tree} did not answer within {READY_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# --------------------------------------------------------------------------------------------------- the load


def rest_request(query: str) -> tuple[str, dict[str, Any]]:
    return "/api/v1/search", {"q": query, "scope": "all", "limit": str(LIMIT)}


def mcp_body(query: str, call_id: int) -> dict[str, Any]:
    args = {"query": query, "scope": "all", "limit": LIMIT, "offset": OFFSET, "max_chars": MAX_CHARS}
    params = {"name": "semantic_search", "arguments": args}
    return {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params}


def mcp_failed(body: bytes) -> bool:
    """Whether a streamable-HTTP answer (JSON or one SSE event) holds an error or a tool error."""
    text = body.decode("utf-8", "replace")
    data = next((line[5:] for line in text.splitlines() if line.startswith("data:")), text)
    try:
        message = json.loads(data)
    except ValueError:
        return True
    return "error" in message or bool(message.get("result", {}).get("isError"))


@dataclass
class Tally:
    """What the search clients did during one run."""

    seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    by_api: dict[str, int] = field(default_factory=lambda: {"rest": 0, "mcp": 0})


async def search_client(url: str, query: str, which: int, until: float, tally: Tally) -> None:
    """One client: worst-case searches back to back until `until`, REST and MCP alternately."""
    headers = {"authorization": f"Bearer {TOKEN}", "accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
        n = which
        while time.monotonic() < until:
            n += 1
            started = time.perf_counter()
            if n % 2:
                path, params = rest_request(query)
                response = await client.get(path, params=params)
                failed, api = response.status_code != 200, "rest"
            else:
                response = await client.post("/mcp", json=mcp_body(query, n))
                failed, api = response.status_code != 200 or mcp_failed(response.content), "mcp"
            tally.seconds.append(time.perf_counter() - started)
            tally.by_api[api] += 1
            if failed:
                tally.errors.append(f"{api} {response.status_code}: {response.text[:200]}")


class Poller(threading.Thread):
    """Polls `/healthz` every `every_s` from its own thread (its own connection); keeps every latency."""

    def __init__(self, url: str, every_s: float) -> None:
        super().__init__(daemon=True)
        self.url, self.every_s = url, every_s
        self.latencies: list[float] = []
        self.failures = 0
        self.load: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        next_at = last_load = time.monotonic()
        with httpx.Client(timeout=60) as client:
            while not self.stop.is_set():
                started = time.perf_counter()
                try:
                    ok = client.get(self.url).status_code == 200
                except httpx.TransportError:
                    ok = False
                self.latencies.append(time.perf_counter() - started)
                self.failures += not ok
                now = time.monotonic()
                if now - last_load >= 1.0:
                    self.load.append(os.getloadavg()[0])
                    last_load = now
                next_at += self.every_s
                self.stop.wait(max(0.0, next_at - time.monotonic()))


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` processes that spin on a core each (`while True: pass`)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop_all(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
    for process in processes:
        process.wait()


async def load_run(url: str, query: str, clients: int, seconds: float, poll_s: float) -> dict[str, Any]:
    """The searches for `seconds` with `/healthz` polled throughout; its numbers."""
    poller = Poller(f"{url}/healthz", poll_s)
    tally = Tally()
    load_before = load_avg()
    poller.start()
    started = time.monotonic()
    until = started + seconds
    await asyncio.gather(*(search_client(url, query, i, until, tally) for i in range(clients)))
    wall = time.monotonic() - started
    poller.stop.set()
    poller.join(60)
    return {
        "healthz": {**latency_summary(poller.latencies), "failures": poller.failures},
        "searches": {**latency_summary(tally.seconds), "per_s": len(tally.seconds) / wall, **tally.by_api},
        "errors": len(tally.errors),
        "error_samples": sorted(set(tally.errors))[:3],
        "wall_s": wall,
        "load_average": {"before": load_before, "during_1min": poller.load, "after": load_avg()},
    }


# --------------------------------------------------------------------------------------------------- main flow


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    store_dir: Path
    trees: tuple[tuple[str, Path], ...]
    clients: int
    seconds: float
    poll_s: float
    words: int
    hogs: tuple[int, ...]
    rounds: int


def warm(url: str, query: str) -> dict[str, Any]:
    """One search of each API, untimed: the store's pages and the repositories' cache are warm after it."""
    headers = {"authorization": f"Bearer {TOKEN}", "accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=url, headers=headers, timeout=300) as client:
        path, params = rest_request(query)
        rest = client.get(path, params=params)
        mcp = client.post("/mcp", json=mcp_body(query, 0))
    if rest.status_code != 200 or mcp.status_code != 200 or mcp_failed(mcp.content):
        raise RuntimeError(f"the warm-up search failed: {rest.status_code} {rest.text[:300]} / {mcp.text[:300]}")
    results = rest.json()["results"]
    return {"rest_results": len(results), "rest_bytes": len(rest.content), "mcp_bytes": len(mcp.content)}


def run_all(opts: Options) -> list[dict[str, Any]]:
    query = worst_query(opts.words)
    rows: list[dict[str, Any]] = []
    for round_no in range(1, opts.rounds + 1):
        for hogs in opts.hogs:
            for label, tree in opts.trees:
                server = Server(tree, opts.store_dir)
                log(f"round {round_no}: {label} ({tree}), {hogs} hog(s): starting the server ...")
                server.start()
                hog_processes: list[subprocess.Popen[bytes]] = []
                try:
                    answer = warm(server.url, query)
                    hog_processes = start_hogs(hogs)
                    result = asyncio.run(load_run(server.url, query, opts.clients, opts.seconds, opts.poll_s))
                finally:
                    stop_all(hog_processes)
                    server.stop()
                row = {"round": round_no, "tree": label, "path": str(tree), "hogs": hogs, "answer": answer, **result}
                print_row(row)
                rows.append(row)
    return rows


def print_row(row: dict[str, Any]) -> None:
    h, s, load = row["healthz"], row["searches"], row["load_average"]
    during = load["during_1min"] or [0.0]
    print(
        f"{row['tree']:>8} hogs={row['hogs']} round {row['round']}: /healthz n={h['count']} p50 {h['p50_ms']:.1f} "
        f"p99 {h['p99_ms']:.1f} max {h['max_ms']:.1f} ms | searches {s['count']} ({s['per_s']:.2f}/s) "
        f"p50 {s['p50_ms']:.0f} p99 {s['p99_ms']:.0f} ms, errors {row['errors']} | load {load['before'][0]:.2f} "
        f"-> {min(during):.2f}..{max(during):.2f}",
        flush=True,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.healthz_under_load", description=__doc__.split("\n")[0])
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, metavar="DIR", help="(%(default)s)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="TREE", help="also run this checkout's server")
    parser.add_argument("--clients", type=int, default=8, help="concurrent search clients (%(default)s)")
    parser.add_argument("--seconds", type=float, default=30.0, help="of load per run (%(default)s)")
    parser.add_argument("--poll-ms", type=float, default=50.0, help="/healthz poll period (%(default)s)")
    parser.add_argument("--words", type=int, default=64, help="words of the query (the default cap: 64)")
    parser.add_argument("--hogs", default="0,1", help="busy loops per run, comma-separated (%(default)s)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every run (%(default)s)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--serve", type=int, default=None, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.clients < 1 or args.seconds <= 0 or args.poll_ms <= 0 or args.rounds < 1 or args.words < 1:
        parser.error("--clients, --seconds, --poll-ms, --words and --rounds must be > 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve is not None:
        serve(args.qdrant_path, args.serve)
        return 0
    if not (args.qdrant_path / "lexical").is_dir():
        raise SystemExit(f"error: no store at {args.qdrant_path}: run bench.mcp_latency --index-only first")
    here = Path(__file__).resolve().parents[1]
    trees = ((("main", args.baseline.resolve()),) if args.baseline else ()) + (("this", here),)
    opts = Options(
        store_dir=args.qdrant_path,
        trees=trees,
        clients=args.clients,
        seconds=args.seconds,
        poll_s=args.poll_ms / 1000,
        words=args.words,
        hogs=tuple(int(h) for h in args.hogs.split(",") if h.strip()),
        rounds=args.rounds,
    )
    log(f"cores {os.cpu_count()}, load {load_avg()}, query of {opts.words} words: {worst_query(opts.words)!r}")
    rows = run_all(opts)
    if args.json is not None:
        command = " ".join([".venv/bin/python -m bench.healthz_under_load", *(argv or sys.argv[1:])])
        write_json(args.json, {"command": command, "cpu_count": os.cpu_count(), "runs": rows})
        print(f"wrote {args.json}")
    return 1 if any(row["errors"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
