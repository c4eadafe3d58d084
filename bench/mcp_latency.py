"""Benchmark MCP tool-call latency on at least 100k indexed chunks (the JDK's own sources), no embedding model.

Run from the repository root:

    .venv/bin/python -m bench.mcp_latency                                   # >= 100k chunks, 300 calls
    .venv/bin/python -m bench.mcp_latency --json bench/results/mcp_latency.json
    .venv/bin/python -m bench.mcp_latency --min-chunks 5000 --calls 60      # a quick check

1. Index: whole JDK modules (`java.base`, `java.desktop`, `java.xml`, `jdk.compiler`, ...; every `.java` file in
   scope, one repository `openjdk/jdk17/<module>` each) are indexed with `index_directory`, lexical-only, into an
   embedded Qdrant (local mode) under `--qdrant-path`, until at least `--min-chunks` chunks are stored. A manifest
   records what was indexed; a later run reuses the store when the manifest matches it (re-runs are cheap).
2. Dense copy (unless `--no-dense`): an in-memory embedded Qdrant gets the same points (payload and lexical
   vector) plus a seeded random 384-dimensional dense vector each, recorded as the model of `FixedVectorEmbedder`,
   an in-process stub whose `embed()` returns vectors computed before the clock starts. So the hybrid (dense +
   lexical, RRF) path of `semantic_search` runs for real while the embedding endpoint's own time is excluded.
   Built by copying the lexical store on every run, not by re-indexing (a persistent local store commits to
   SQLite once per point, which would make the copy take minutes).
3. Calls: every tool through `fastmcp.Client(create_server(lambda: deps))` (in-memory transport, the whole MCP
   request/response path but no HTTP), with arguments drawn from the index with a fixed seed: natural-language
   and identifier `semantic_search`, `get_symbol`, `find_by_annotation` (capped by `max_chars`), `get_callers`,
   `get_callees`, `find_endpoint`, `find_injections`, `find_implementations`, `get_file_outline`, `list_repos`.
   `--calls` are shared out over the tools (semantic_search x3) and run interleaved in a seeded order after one
   untimed warm-up call per tool; a tool stops once it has spent `--tool-budget` seconds (its count says so).
   The dense run repeats only `semantic_search`: no other tool touches the embedder or the dense vectors.
4. HTTP constant: `tools/list` and `list_repos` over in-memory and over real HTTP (uvicorn on loopback,
   streamable HTTP, stateless, no auth) in this process; the difference is what the HTTP transport adds per call.
5. Where the time goes: per-call building blocks timed alone (the facet every tool runs to check the repository,
   one scroll page), and a cProfile of the median and the slowest call of every tool whose p99 exceeds
   `--slow-ms`.

Qdrant embedded (local) mode keeps every point in memory, answers by brute force and ignores payload indexes (it
warns above 20,000 points; suppressed here). The numbers are OUR overhead plus local mode's, not a Qdrant
server's. Exit status: 0 when all went through, 1 when a call failed unexpectedly, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import os
import platform
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from fastmcp.server.middleware import Middleware

from app.auth.access import LOCAL
from bench.common import (
    LOCAL_MODE_WARNING,
    PROGRESS_EVERY_S,
    SEED,
    add_jdk_arguments,
    cpu_seconds,
    ensure_extracted,
    interpolated,
    kb_to_mb,
    latency_summary,
    load_avg,
    log,
    rss_mb,
    status_kb,
    timed_async,
    version,
    write_json,
)
from bench.index_jdk_queries import LOCAL_MODE_THRESHOLD
from bench.mcp_latency_calls import (
    TOOL_WEIGHTS,
    Call,
    Run,
    Sample,
    catalog_report,
    load_catalog,
    plan_calls,
    plan_report,
    warmup_calls,
)
from bench.mcp_latency_parts import components, http_constant
from bench.mcp_latency_report import print_report, profile_slow, text_of
from bench.mcp_latency_stores import (
    DENSE_DIM,
    PREFERRED_MODULES,
    FixedVectorEmbedder,
    build_dense,
    dense_store,
    ensure_lexical,
    lexical_settings,
)
from testkit.standins import Around, ByRole, around

DEFAULT_STORE: Final = Path("/tmp/javakb-bench/mcp-latency")
MASKED_ERROR: Final = "Error calling tool"  # an exception other than ToolError, masked by the server


# --------------------------------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------------------------------- the stores


# --------------------------------------------------------------------------------------------------- the calls


# --------------------------------------------------------------------------------------------------- measuring


STORE_OPS: Final = ("facet", "scroll", "query_points", "count")
_Client = TypeVar("_Client")


class StoreProbe:
    """Counts and times the Qdrant client calls (facet, scroll pages, queries) made during each tool call."""

    def __init__(self) -> None:
        self.ops: dict[str, list[float]] = {}

    def wrappers(self) -> dict[str, Around]:
        """What times a qdrant-client's calls, for `around` (or `ByRole` in `open_deps(wrap=...)`)."""
        return {name: timed_async(self._recorder(name)) for name in STORE_OPS}

    def client(self, client: _Client) -> _Client:
        """`client` with its calls timed."""
        return around(client, **self.wrappers())

    def _recorder(self, name: str) -> Callable[[float, tuple[Any, ...]], None]:
        def record(seconds: float, _args: tuple[Any, ...]) -> None:
            row = self.ops.setdefault(name, [0.0, 0.0])
            row[0] += 1
            row[1] += seconds

        return record

    def take(self) -> dict[str, list[float]]:
        ops, self.ops = self.ops, {}
        return ops


class ServerClock(Middleware):
    """The server's own time of each tool call: from the call reaching the tools' middleware to its result.

    What the round trip adds to it is the transport and the client: the MCP SDK's client validates each
    structured result against the tool's output schema with `jsonschema` (pure Python: about 25 ms for a
    40-member set page on this machine), which an agent's client does in its own process.
    """

    def __init__(self) -> None:
        self.last = 0.0
        self.last_cpu = 0.0  # the process's CPU time meanwhile (every thread: the store's, the offload's)

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return await call_next(context)
        finally:
            self.last, self.last_cpu = time.perf_counter() - started, time.process_time() - cpu


def clocked_server(deps: Any) -> tuple[Any, ServerClock]:
    """The MCP server over these dependencies, with a `ServerClock` inside its middleware."""
    from mcp_server.server import create_server

    clock = ServerClock()
    server = create_server(lambda: deps, unauthenticated=LOCAL)
    server.add_middleware(clock)
    return server, clock


async def timed_call(client: Any, call: Call, probe: StoreProbe, clock: ServerClock) -> Sample:
    probe.take()
    clock.last = 0.0
    t0, c0 = time.perf_counter(), time.process_time()
    result = await client.call_tool_mcp(call.tool, call.args)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    text = text_of(result)
    is_error = bool(result.is_error)
    message = text[:200] if is_error else ""
    return Sample(
        call, seconds, cpu, is_error, len(text), message, probe.take(), clock.last, server_cpu_seconds=clock.last_cpu
    )


async def measure(
    client: Any, calls: Sequence[Call], budget_s: float, label: str, probe: StoreProbe, clock: ServerClock
) -> Run:
    """Warm-up call per tool, then every call in order, skipping a tool once it has spent its budget."""
    for call in warmup_calls(calls):
        await client.call_tool_mcp(call.tool, call.args)
    gc.collect()
    run = Run()
    spent: dict[str, float] = dict.fromkeys(TOOL_WEIGHTS, 0.0)
    t0 = last = time.perf_counter()
    for i, call in enumerate(calls):
        if spent[call.tool] >= budget_s:
            run.skipped[call.tool] += 1
            continue
        sample = await timed_call(client, call, probe, clock)
        spent[call.tool] += sample.seconds
        run.samples.append(sample)
        run.load.append(os.getloadavg()[0])
        now = time.perf_counter()
        if now - last >= PROGRESS_EVERY_S:
            last = now
            log(f"  [{label}] {i + 1}/{len(calls)} calls, {now - t0:6.1f} s")
    run.seconds = time.perf_counter() - t0
    return run


def summarize(samples: Sequence[Sample]) -> dict[str, Any]:
    row = latency_summary([s.seconds for s in samples])
    wall, cpu = sum(s.seconds for s in samples), sum(s.cpu_seconds for s in samples)
    row["cpu_per_wall"] = cpu / wall if wall > 0 else None
    cpu_ms = sorted(s.cpu_seconds * 1000 for s in samples)
    row["cpu_p50_ms"] = interpolated(cpu_ms, 50)
    row["cpu_p99_ms"] = interpolated(cpu_ms, 99)
    server_ms = sorted(s.server_seconds * 1000 for s in samples)
    row["server_p50_ms"] = interpolated(server_ms, 50)
    row["server_p99_ms"] = interpolated(server_ms, 99)
    server_cpu_ms = sorted(s.server_cpu_seconds * 1000 for s in samples)
    row["server_cpu_p50_ms"] = interpolated(server_cpu_ms, 50)
    row["server_cpu_p99_ms"] = interpolated(server_cpu_ms, 99)
    row["errors"] = sum(s.is_error for s in samples)
    row["output_chars_p50"] = interpolated(sorted(float(s.chars) for s in samples), 50)
    n = max(1, len(samples))
    store: dict[str, dict[str, float]] = {}
    for op in STORE_OPS:
        calls = sum(s.store.get(op, [0.0, 0.0])[0] for s in samples)
        if calls:
            seconds = sum(s.store.get(op, [0.0, 0.0])[1] for s in samples)
            store[op] = {"per_call": calls / n, "ms_per_call": seconds * 1000 / n}
    row["store"] = store
    row["store_ms_mean"] = sum(v["ms_per_call"] for v in store.values())
    row["rest_ms_mean"] = row["mean_ms"] - row["store_ms_mean"]
    return row


def run_report(run: Run, planned: Counter[str]) -> dict[str, Any]:
    by_tool: dict[str, list[Sample]] = {}
    for sample in run.samples:
        by_tool.setdefault(sample.call.tool, []).append(sample)
    tools: dict[str, Any] = {}
    for tool in TOOL_WEIGHTS:
        samples = by_tool.get(tool, [])
        if not samples:
            continue
        row = summarize(samples)
        row["planned"] = planned[tool]
        row["skipped_for_budget"] = run.skipped[tool]
        kinds: dict[str, list[Sample]] = {}
        for s in samples:
            kinds.setdefault(s.call.kind, []).append(s)
        row["by_kind"] = {k: summarize(v) for k, v in sorted(kinds.items())}
        row["slowest"] = [
            {
                "ms": s.seconds * 1000,
                "args": s.call.args,
                "kind": s.call.kind,
                "chars": s.chars,
                "store": {op: {"calls": int(v[0]), "ms": v[1] * 1000} for op, v in s.store.items()},
            }
            for s in sorted(samples, key=lambda s: -s.seconds)[:3]
        ]
        row["error_messages"] = sorted({s.message.split("\n")[0][:120] for s in samples if s.is_error})[:5]
        row["unexpected_errors"] = sum(s.is_error and s.message.startswith(MASKED_ERROR) for s in samples)
        tools[tool] = row
    return {
        "tools": tools,
        "overall": summarize(run.samples),
        "wall_seconds": run.seconds,
        "load_average_1min_during": {
            "min": min(run.load, default=0.0),
            "max": max(run.load, default=0.0),
            "mean": sum(run.load) / len(run.load) if run.load else 0.0,
        },
    }


# --------------------------------------------------------------------------------------------------- profiling


# --------------------------------------------------------------------------------------------------- HTTP


# --------------------------------------------------------------------------------------------------- main flow


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    store_dir: Path
    cache_dir: Path
    min_chunks: int
    calls: int
    budget_s: float
    slow_ms: float
    jobs: int
    modules: tuple[str, ...]
    seed: int
    index_only: bool
    dense: bool
    http: bool
    profile: bool
    optimize: bool = False


async def run_all(opts: Options) -> dict[str, Any]:
    from fastmcp import Client

    from entry.deps import open_deps

    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING, category=UserWarning)
    opts.store_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"load_average_start": load_avg()}
    t0 = time.perf_counter()
    probe = StoreProbe()  # the lexical store's qdrant-client, timed from the start (each call takes its own)
    async with open_deps(lexical_settings(opts.store_dir), wrap=ByRole({"qdrant": probe.wrappers()})) as deps:
        result["open"] = {"seconds": time.perf_counter() - t0, "rss_mb": rss_mb()}
        log(f"store opened in {result['open']['seconds']:.1f} s")
        result["index"] = await ensure_lexical(
            deps, opts.store_dir, opts.cache_dir, opts.min_chunks, opts.jobs, opts.modules
        )
        result["index"]["points_in_store"] = await deps.store.count()
        result["load_average_after_index"] = load_avg()
        if opts.index_only:
            return result
        catalog = await load_catalog(deps)
        result["catalog"] = catalog_report(catalog)
        calls = plan_calls(catalog, opts.calls, opts.seed)
        del catalog.methods[:]  # the rest is small
        result["plan"] = plan_report(calls)
        result["components"] = await components(deps, catalog)
        log(f"measuring {len(calls)} calls (budget {opts.budget_s:.0f} s per tool) ...")
        server, clock = clocked_server(deps)
        async with Client(server) as client:
            run = await measure(client, calls, opts.budget_s, "lexical", probe, clock)
            result["lexical"] = run_report(run, Counter(c.tool for c in calls))
            if opts.profile:
                result["profiles"] = await profile_slow(client, run, result["lexical"], opts.slow_ms)
        result["rss_mb_after_lexical"] = rss_mb()
        if opts.http:
            log("HTTP constant ...")
            result["http"] = await http_constant(deps)
        if opts.dense:
            result["dense"] = await dense_run(deps, opts, calls)
    result["load_average_end"] = load_avg()
    result["process_cpu_seconds"] = cpu_seconds()
    return result


async def dense_run(deps: Any, opts: Options, calls: Sequence[Call]) -> dict[str, Any]:
    from fastmcp import Client

    from app.search.service import SearchService
    from app.store.indexing import Indexer

    semantic = [c for c in calls if c.tool == "semantic_search"]
    stub = FixedVectorEmbedder(DENSE_DIM)
    stub.prepare([c.args["query"] for c in semantic])
    probe = StoreProbe()
    async with dense_store(probe.client) as store:
        record = await build_dense(deps.store, store, opts.seed)
        if opts.optimize:
            log("building the dense copy's vector index (HNSW) ...")
            started = time.perf_counter()
            record["optimized"] = await store.optimize()
            record["optimize_seconds"] = time.perf_counter() - started
        record["rss_mb_after"] = rss_mb()
        dense = dataclasses.replace(
            deps, store=store, embedder=stub, indexer=Indexer(store, stub), search=SearchService(store, stub)
        )
        log(f"measuring {len(semantic)} hybrid semantic_search calls (dense + lexical) ...")
        server, clock = clocked_server(dense)
        async with Client(server) as client:
            run = await measure(client, semantic, opts.budget_s, "dense", probe, clock)
            report = run_report(run, Counter(c.tool for c in semantic))
            if opts.profile:
                report["profiles"] = await profile_slow(client, run, report, opts.slow_ms, slowest=False)
    return {
        "build": record,
        **report,
        "stub": {"embed_calls": stub.calls, "misses": stub.misses, "seconds_in_embed": stub.seconds},
    }


# --------------------------------------------------------------------------------------------------- report


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.mcp_latency",
        description="MCP tool-call latency (p50/p90/p99 per tool) with >= 100k JDK chunks in embedded Qdrant.",
    )
    parser.add_argument("--min-chunks", type=int, default=100_000, help="index modules until (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=300, help="timed calls in all, shared over tools (%(default)s)")
    parser.add_argument(
        "--tool-budget", type=float, default=45.0, help="seconds of calls per tool and run, then stop (%(default)s)"
    )
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, metavar="DIR", help="stores (%(default)s)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    add_jdk_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1, help="index_directory parse processes (default: 1)")
    parser.add_argument(
        "--modules",
        default=",".join(PREFERRED_MODULES),
        help="JDK modules to index first, in order, comma-separated (then the others by name; default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=SEED, help="argument sampling seed (default: %(default)s)")
    parser.add_argument("--slow-ms", type=float, default=1000.0, help="profile tools with p99 above (%(default)s)")
    parser.add_argument("--index-only", action="store_true", help="build (or check) the index, measure nothing")
    parser.add_argument("--no-dense", action="store_true", help="skip the hybrid run with the stub embedder")
    parser.add_argument(
        "--optimize", action="store_true", help="build the dense copy's HNSW index (`javakb optimize`) before timing it"
    )
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP-constant sample")
    parser.add_argument("--no-profile", action="store_true", help="skip profiling the slow tools")
    args = parser.parse_args(argv)
    if args.min_chunks < 1 or args.calls < len(TOOL_WEIGHTS) or args.jobs < 1 or args.tool_budget <= 0:
        parser.error(f"--min-chunks, --jobs and --tool-budget must be > 0 and --calls >= {len(TOOL_WEIGHTS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    ensure_extracted(args.src_zip, args.cache_dir)
    opts = Options(
        store_dir=args.qdrant_path,
        cache_dir=args.cache_dir,
        min_chunks=args.min_chunks,
        calls=args.calls,
        budget_s=args.tool_budget,
        slow_ms=args.slow_ms,
        jobs=args.jobs,
        modules=tuple(m.strip() for m in args.modules.split(",") if m.strip()),
        seed=args.seed,
        index_only=args.index_only,
        dense=not args.no_dense,
        http=not args.no_http,
        profile=not args.no_profile,
        optimize=args.optimize,
    )
    t0 = time.perf_counter()
    result = asyncio.run(run_all(opts))
    uname = os.uname()
    report: dict[str, Any] = {
        "command": " ".join([".venv/bin/python -m bench.mcp_latency", *(argv if argv is not None else sys.argv[1:])]),
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(opts).items()},
        "environment": {
            "python": platform.python_version(),
            "qdrant_client": version("qdrant-client"),
            "fastmcp": version("fastmcp"),
            "mcp": version("mcp"),
            "cpu_count": os.cpu_count(),
            "platform": f"{uname.sysname} {uname.release} {uname.machine}",
            "javakb_env": sorted(k for k in os.environ if k.startswith("JAVAKB_")),
            "total_seconds": time.perf_counter() - t0,
            "peak_rss_mb": max(0.0, kb_to_mb(status_kb("VmHWM")) or 0.0),
        },
        "notes": {
            "qdrant": (
                "Qdrant embedded (local) mode: every point in memory, brute-force search, payload indexes ignored; "
                f"qdrant-client warns above {LOCAL_MODE_THRESHOLD:,} points (warning suppressed). Numbers are our "
                "overhead plus local mode's, not a Qdrant server's."
            ),
            "latency": "wall time of fastmcp Client.call_tool_mcp over the in-memory transport; MB = 10^6 bytes",
        },
        "result": result,
    }
    if opts.index_only:
        print(json.dumps(result, indent=2))
        return 0
    print_report(report)
    env = report["environment"]
    print(f"\ntotal {env['total_seconds']:.0f} s, peak RSS {env['peak_rss_mb']:.0f} MB")
    if args.json is not None:
        write_json(args.json, report)
        print(f"wrote {args.json}")
    runs = [result["lexical"], *([result["dense"]] if "dense" in result else [])]
    unexpected = sum(row["unexpected_errors"] for run in runs for row in run["tools"].values())
    if unexpected:
        print(f"\n{unexpected} calls failed with a masked internal error (see error_messages)", file=sys.stderr)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
