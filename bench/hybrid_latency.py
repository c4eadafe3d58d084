"""Hybrid `semantic_search` latency with the embedded default model on >= 100k JDK chunks, against lexical-only.

Run from the repository root (one core: `taskset -c 0`):

    taskset -c 0 .venv/bin/python -m bench.hybrid_latency --json bench/results/hybrid_latency.json
    .venv/bin/python -m bench.hybrid_latency --min-chunks 5000 --calls 60                      # a quick check

1. Index: JDK modules (`bench.mcp_latency_stores.ensure_lexical`, the corpus of `bench.mcp_latency`) through
   `index_directory` with the embedded default model (`StaticEmbedder`, `JAVAKB_EMBEDDING__PROVIDER=embedded`)
   into an in-memory embedded store, until `--min-chunks` chunks are stored. Every chunk is embedded by the
   real model; the embedding thread's own CPU time (from /proc, the one `embed` thread of `entry.deps`) and
   the wall time inside `embed()` give the embedding throughput while indexing.
2. Calls: the natural-language and identifier `semantic_search` calls of `bench.mcp_latency_calls` (drawn
   from the index, fixed seed), each through `fastmcp.Client(create_server(...))` twice, interleaved in
   alternating order: hybrid (the real service, the question embedded by the model inside the call) and the
   baseline, lexical-only on the same store (the same `SearchService` without an embedder, what
   `JAVAKB_EMBEDDING__PROVIDER=none` builds). Server-side time is the tools' middleware clock (`ServerClock`).
3. Where the time goes: the question's embedding alone (`embed_query`), and a cProfile of `--profile-calls`
   hybrid searches through `SearchService` with its offload inline (so the profile sees the whole search).
4. Memory: RSS of a fresh process that opens the service's dependencies (`entry.deps.open_deps`, what
   `serve` opens) on an empty store and answers one search, with provider `embedded` and `none`: the
   difference is what the model adds. The bench process's RSS after indexing (the store's dense vectors
   included) is reported beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import cProfile
import dataclasses
import gc
import io
import json
import os
import pstats
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from app.auth.access import LOCAL
from app.core.settings import EmbeddingProvider
from bench.common import (
    LOCAL_MODE_WARNING,
    SEED,
    add_jdk_arguments,
    ensure_extracted,
    latency_summary,
    load_avg,
    log,
    rss_mb,
    timed_async,
    write_json,
)
from bench.index_builds import BuildProbe, settle
from bench.mcp_latency import StoreProbe, clocked_server, run_report, timed_call
from bench.mcp_latency_calls import Call, Run, load_catalog, plan_calls
from bench.mcp_latency_stores import PREFERRED_MODULES, ensure_lexical
from testkit.standins import around

DEFAULT_STORE: Final = Path("/tmp/javakb-bench/hybrid-latency")  # the manifest only: the store is in memory
ALIAS: Final = "javakb_hybrid_latency"
EMBED_THREAD: Final = "embed"  # `entry.deps` names the embedded model's one thread so
CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
PROFILE_TOP: Final = 25
RSS_QUESTION: Final = "parse a date from a string with a pattern"


def settings(provider: EmbeddingProvider, store: str = ":memory:") -> Any:
    """The bench's settings: Java files only, the given embedding provider, an embedded store at `store`."""
    from app.core.settings import ChunkingSettings, EmbeddingSettings, QdrantSettings, Settings

    return Settings(
        chunking=ChunkingSettings(include=("**/*.java",), exclude=()),
        embedding=EmbeddingSettings(provider=provider),
        qdrant=QdrantSettings(path=store, collection=ALIAS),
    )


def thread_cpu_s(prefix: str) -> float:
    """CPU seconds (user + system) of this process's threads whose name starts with `prefix`."""
    total = 0
    for thread in threading.enumerate():
        if thread.name.startswith(prefix) and thread.native_id is not None:
            try:
                fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / CLOCK_TICKS


class EmbedClock:
    """Counts the texts given to `embed()` and the wall time spent in it (wraps the deps' embedder)."""

    def __init__(self) -> None:
        self.texts = 0
        self.calls = 0
        self.seconds = 0.0

    def record(self, seconds: float, args: tuple[Any, ...]) -> None:
        """For `bench.common.timed_async`: one `embed(texts)` call took `seconds`."""
        self.seconds += seconds
        self.calls += 1
        self.texts += len(args[0])


def embedding_report(clock: EmbedClock, embed_cpu_s: float, index: dict[str, Any]) -> dict[str, Any]:
    wall = index["index_seconds_total"]
    return {
        "chunks_embedded": clock.texts,
        "embed_calls": clock.calls,
        "embed_thread_cpu_s": round(embed_cpu_s, 2),
        "chunks_per_cpu_s": round(clock.texts / embed_cpu_s) if embed_cpu_s > 0 else None,
        "seconds_inside_embed": round(clock.seconds, 2),
        "chunks_per_s_inside_embed": round(clock.texts / clock.seconds) if clock.seconds > 0 else None,
        "index_wall_s": round(wall, 1),
        "chunks_per_s_whole_indexing": round(index["chunks"] / wall) if wall > 0 else None,
    }


async def interleaved(pairs: Sequence[tuple[str, Any, Any, StoreProbe]], calls: Sequence[Call]) -> dict[str, Run]:
    """Every call on every client, the clients' order alternating call by call; one warm-up call each first."""
    runs = {label: Run() for label, *_ in pairs}
    for _, client, _, _ in pairs:
        await client.call_tool_mcp(calls[0].tool, calls[0].args)
    gc.collect()
    started = time.perf_counter()
    for i, call in enumerate(calls):
        order = pairs if i % 2 == 0 else pairs[::-1]
        for label, client, clock, probe in order:
            runs[label].samples.append(await timed_call(client, call, probe, clock))
            runs[label].load.append(os.getloadavg()[0])
        if (i + 1) % 50 == 0:
            log(f"  {i + 1}/{len(calls)} calls, {time.perf_counter() - started:6.1f} s")
    for run in runs.values():
        run.seconds = time.perf_counter() - started
    return runs


async def query_embedding(embedder: Any, questions: Sequence[str]) -> dict[str, Any]:
    """The question's embedding alone, as the search calls it (`embed_query`), every question once."""
    seconds = []
    for question in questions:
        started = time.perf_counter()
        await embedder.embed_query(question)
        seconds.append(time.perf_counter() - started)
    return latency_summary(seconds)


async def store_queries(deps: Any, questions: Sequence[str], limit: int) -> dict[str, Any]:
    """The store's query alone for each question's vector: dense only (no filter), the dense scan's cost."""
    seconds = []
    for question in questions:
        vector = await deps.embedder.embed_query(question)
        started = time.perf_counter()
        await deps.store.query(lexical=None, dense=vector, where=None, limit=limit)
        seconds.append(time.perf_counter() - started)
    return {"limit": limit, **latency_summary(seconds)}


async def profile_searches(deps: Any, calls: Sequence[Call], n: int) -> dict[str, Any]:
    """cProfile `n` hybrid searches through `SearchService` with an inline offload: the top functions, and
    the wall time of the store's queries (they run on the store's own thread, which the profile does not see)."""
    from app.search.scoping import Filters
    from app.search.service import SearchService

    async def inline(work: Any, /) -> Any:
        return work()

    queries: list[float] = []
    store = around(deps.store, query=timed_async(lambda seconds, _args: queries.append(seconds)))
    search = SearchService(store, deps.embedder, offload=inline, dense_weight=deps.search.dense_weight)
    chosen = [c for c in calls if "symbol_type" not in c.args and "path_prefix" not in c.args][:n]
    await search.search(LOCAL, chosen[0].args["query"], Filters(), 10)
    queries.clear()
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for call in chosen:
        await search.search(LOCAL, call.args["query"], Filters(), 10)
    profile.disable()
    wall = time.perf_counter() - started
    rows: dict[str, list[str]] = {}
    for key in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).strip_dirs().sort_stats(key).print_stats(PROFILE_TOP)
        rows[key] = [line for line in out.getvalue().splitlines() if line.strip()][-PROFILE_TOP - 1 :]
    return {
        "searches": len(chosen),
        "ms_per_search_under_profile": 1000 * wall / len(chosen),
        "store_queries_per_search": len(queries) / len(chosen),
        "store_query_ms_per_search": 1000 * sum(queries) / len(chosen),
        "top": rows,
    }


async def run_all(opts: argparse.Namespace) -> dict[str, Any]:
    from fastmcp import Client

    from entry.deps import open_deps
    from testkit.standins import ByRole

    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING, category=UserWarning)
    opts.qdrant_path.mkdir(parents=True, exist_ok=True)
    clock = EmbedClock()
    result: dict[str, Any] = {"load_average_start": load_avg(), "rss_mb_start": rss_mb()}
    wrap = ByRole({"embedder": {"embed": timed_async(clock.record)}})
    async with open_deps(settings("embedded", str(opts.store) if opts.store else ":memory:"), wrap=wrap) as deps:
        modules = tuple(m.strip() for m in opts.modules.split(",") if m.strip())
        probe = await background_builds(deps, opts.background_index, opts.build_threshold)
        watching = asyncio.create_task(probe.run()) if probe else None
        index = await ensure_lexical(deps, opts.qdrant_path, opts.cache_dir, opts.min_chunks, opts.jobs, modules)
        if probe and watching:
            log("indexed; waiting for the background index builds to settle ...")
            result["background_builds"] = {"settle": await settle(deps.store)}
            probe.stop()
            await watching
            result["background_builds"]["while_indexing"] = probe.report()
        index["points_in_store"] = await deps.store.count()
        result["index"] = index
        result["embedding"] = embedding_report(clock, thread_cpu_s(EMBED_THREAD), index)
        result["load_average_after_index"] = load_avg()
        if opts.optimize:
            log("building the HNSW index (`Store.optimize()`, as `javakb index` ends) ...")
            started = time.perf_counter()
            result["optimize"] = {"result": await deps.store.optimize(), "seconds": time.perf_counter() - started}
        gc.collect()
        result["rss_mb_after_index"] = rss_mb()
        log(f"indexed {index['points_in_store']:,} points; embedding {result['embedding']}")
        catalog = await load_catalog(deps)
        calls = [c for c in plan_calls(catalog, opts.calls, opts.seed) if c.tool == "semantic_search"]
        del catalog
        result["semantic_calls"] = dict(Counter(c.kind for c in calls))
        result["query_embedding"] = await query_embedding(deps.embedder, [c.args["query"] for c in calls])
        lexical_search = copy.copy(deps.search)  # the same service, no embedder: what provider `none` builds
        lexical_search.embedder = None
        lexical_deps = dataclasses.replace(deps, embedder=None, search=lexical_search)
        hybrid_server, hybrid_clock = clocked_server(deps)
        lexical_server, lexical_clock = clocked_server(lexical_deps)
        log(f"measuring {len(calls)} semantic_search calls, hybrid and lexical interleaved ...")
        async with Client(hybrid_server) as hybrid, Client(lexical_server) as lexical:
            runs = await interleaved(
                [
                    ("hybrid", hybrid, hybrid_clock, StoreProbe()),
                    ("lexical", lexical, lexical_clock, StoreProbe()),
                ],
                calls,
            )
        planned = Counter(c.tool for c in calls)
        for label, run in runs.items():
            result[label] = run_report(run, planned)
        if opts.profile_calls:
            log(f"profiling {opts.profile_calls} hybrid searches ...")
            result["profile"] = await profile_searches(deps, calls, opts.profile_calls)
        questions = [c.args["query"] for c in calls]
        result["dense_query_only"] = {n: await store_queries(deps, questions, n) for n in (10, 60)}
    result["rss"] = {provider: rss_probe_process(provider) for provider in ("none", "embedded")}
    result["rss"]["added_by_model_mb"] = result["rss"]["embedded"]["rss_mb"] - result["rss"]["none"]["rss_mb"]
    result["load_average_end"] = load_avg()
    return result


async def background_builds(deps: Any, enabled: bool, threshold: int | None) -> BuildProbe | None:
    """With `--background-index`: the store builds its index as `serve`'s does, and a probe watches the writes."""
    if not enabled:
        return None
    from app.store.edge_index import BuildPolicy

    qdrant = deps.settings.qdrant
    deps.store.builds.policy = BuildPolicy(
        threshold=threshold or qdrant.index_build.threshold, journal_max=qdrant.index_build.journal_max
    )
    await deps.store.ensure(await deps.index_model())
    return BuildProbe(deps.store, await deps.embedder.embed_query(RSS_QUESTION))


def rss_probe_process(provider: EmbeddingProvider) -> dict[str, Any]:
    """`rss_probe` in a fresh interpreter (so nothing this process loaded counts)."""
    command = [sys.executable, "-m", "bench.hybrid_latency", "--rss-probe", provider]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    probe: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return probe


async def rss_probe(provider: EmbeddingProvider) -> dict[str, Any]:
    """Open the service's dependencies with `provider` on an empty in-memory store and search once: RSS."""
    from entry.deps import open_deps

    async with open_deps(settings(provider)) as deps:
        await deps.store.ensure(await deps.index_model())
        opened = rss_mb()
        await deps.search.search(LOCAL, RSS_QUESTION)
        gc.collect()
        return {"provider": provider, "rss_mb_opened": opened, "rss_mb": rss_mb()}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.hybrid_latency", description=__doc__.split("\n")[0])
    parser.add_argument("--min-chunks", type=int, default=100_000, help="index modules until (default: %(default)s)")
    parser.add_argument(
        "--calls",
        type=int,
        default=600,
        help="calls planned over all tools; semantic_search's share runs",
    )
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, metavar="DIR", help="manifest's directory")
    parser.add_argument(
        "--store",
        type=Path,
        metavar="DIR",
        help="keep the Edge store in DIR (default: in memory); a later run with the same DIR and --qdrant-path reuses "
        "its modules, and its index once --optimize built it (to compare two checkouts on one store)",
    )
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    add_jdk_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1, help="index_directory parse processes (default: 1)")
    parser.add_argument("--modules", default=",".join(PREFERRED_MODULES), help="JDK modules, in order")
    parser.add_argument("--seed", type=int, default=SEED, help="argument sampling seed (default: %(default)s)")
    parser.add_argument("--profile-calls", type=int, default=40, help="hybrid searches to cProfile (0: none)")
    parser.add_argument("--optimize", action="store_true", help="build the HNSW index before the calls")
    parser.add_argument(
        "--background-index",
        action="store_true",
        help="build the HNSW index in the background while indexing, as `serve` does (app.store.edge_index)",
    )
    parser.add_argument(
        "--build-threshold", type=int, default=None, help="with --background-index: instead of the setting's"
    )
    parser.add_argument("--rss-probe", choices=("none", "embedded"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the issue asks for, side by side."""
    rows = {}
    for label in ("hybrid", "lexical"):
        row = result[label]["tools"]["semantic_search"]
        keys = ("server_p50_ms", "server_p99_ms", "server_cpu_p50_ms", "server_cpu_p99_ms", "p50_ms", "p99_ms")
        rows[label] = {k: round(row[k], 1) for k in (*keys, "cpu_p50_ms", "cpu_p99_ms")}
        rows[label]["by_kind_server_p50_ms"] = {
            kind: round(v["server_p50_ms"], 1) for kind, v in row["by_kind"].items()
        }
    return {
        "chunks": result["index"]["points_in_store"],
        "semantic_search": rows,
        "query_embedding_p50_ms": round(result["query_embedding"]["p50_ms"], 3),
        "dense_query_only_p50_ms": {n: round(v["p50_ms"], 1) for n, v in result.get("dense_query_only", {}).items()},
        "profile": {k: v for k, v in result.get("profile", {}).items() if k != "top"},
        "embedding": result["embedding"],
        "rss_added_by_model_mb": round(result["rss"]["added_by_model_mb"], 1),
        "rss_mb_after_index": result["rss_mb_after_index"],
        "optimize": result.get("optimize"),
        "background_builds": result.get("background_builds"),
        "load_average": [result["load_average_start"], result["load_average_end"]],
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.rss_probe:
        print(json.dumps(asyncio.run(rss_probe(args.rss_probe))))
        return 0
    ensure_extracted(args.src_zip, args.cache_dir)
    started = time.perf_counter()
    result = asyncio.run(run_all(args))
    report = {
        "command": " ".join(
            [".venv/bin/python -m bench.hybrid_latency", *(argv if argv is not None else sys.argv[1:])]
        ),
        "cpu_affinity": sorted(os.sched_getaffinity(0)),
        "total_seconds": round(time.perf_counter() - started, 1),
        "summary": summary(result),
        "result": result,
    }
    print(json.dumps(report["summary"], indent=2))
    for line in result.get("profile", {}).get("top", {}).get("cumulative", []):
        print(line)
    if args.json is not None:
        write_json(args.json, report)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
