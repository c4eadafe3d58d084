"""Benchmark indexing and search end to end on the JDK's own sources, with no real embedding model.

Run from the repository root:

    .venv/bin/python -m bench.index_jdk                          # java.base, lexical-only and HTTP stub
    .venv/bin/python -m bench.index_jdk --mode stub --stub both   # HTTP stub and in-process stub
    .venv/bin/python -m bench.index_jdk --limit 300 --queries 40  # a quick check
    .venv/bin/python -m bench.index_jdk --module java.base,java.desktop --mode lexical   # 109k chunks, one repo

Each mode runs in its own spawned process (so peak RSS is that mode's own) against a fresh embedded Qdrant
folder (local mode), with every `.java` file of the module in scope:

1. cold index: `index_directory` into an empty collection (chunks, embeds, upserts);
2. search latency: `--queries` hybrid searches generated deterministically from the index, plus exact
   `symbol` and `callers` lookups for `--lookups` names;
3. re-run: the same tree indexed again by a freshly opened store (as a second `javakb index` would be):
   it must embed nothing; a non-zero count is reported as a bug (exit status 1);
4. search latency again, same queries.

Modes: `lexical` has no embedder (BM25 over the sparse vectors only). `stub-http` points
`EmbeddingSettings.base_url` at `testkit.fake_embedder.FakeEmbeddingServer` (384 dimensions, like
MiniLM) running in a separate process with TCP_NODELAY (as real servers do; with Nagle each request waits
~40 ms for a delayed ACK), so our client's batching, JSON and loopback HTTP are measured but the stub's own
hashing is not on our CPU. `stub-inproc` (`--stub inproc|both`) hands the indexer an in-process `Embedder`
computing the same `fake_vector`s; the time spent inside it is reported so it can be subtracted.

Where the index time goes is measured by timed stand-ins injected into the run (`bench/index_jdk_probe.py`):
the store's calls, the embedder, `Indexer.write` (per batch) and the building of points, and the steps of
`index_directory` (walk, read+chunk, removal of vanished files); a timed call inside another one counts
toward the outer one. The JSON
records a digest of app/ and pipeline/ at the start and the end, since the numbers belong to one code version.

Qdrant embedded (local) mode keeps every point in memory and answers by brute force (no HNSW, payload
indexes ignored); it warns above 20,000 points (suppressed here, mentioned once in the output). The numbers
are therefore OUR overhead plus local mode's, not a Qdrant server's. Exit status: 0 when all is well, 1 when
a re-run embedded or deleted anything or a mode failed, 2 on bad arguments or a missing source zip.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import multiprocessing
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

from bench.common import (
    DEFAULT_MODULE,
    LOCAL_MODE_WARNING,
    MB,
    PROGRESS_EVERY_S,
    SEED,
    STUB_DIM,
    STUB_MODEL,
    StubServer,
    add_jdk_arguments,
    count_input,
    disk_mb,
    ensure_extracted,
    kb_to_mb,
    latency_summary,
    linked_tree,
    max_rss_mb,
    rate,
    status_kb,
    version,
    write_json,
)
from bench.index_jdk_probe import Meter, Probe, ProbeWrap, batch_growth, timed_steps
from bench.index_jdk_queries import (
    LOCAL_MODE_THRESHOLD,
    InProcessStub,
    Query,
    digest,
    load_catalog,
    make_lookup_names,
    make_queries,
    methods_of,
)
from bench.index_jdk_report import print_report

WARMUP_QUERIES: Final = 5
MODES: Final = ("lexical", "stub-http", "stub-inproc")


# --------------------------------------------------------------------------------------------------- measuring


# --------------------------------------------------------------------------------------------------- stubs


# --------------------------------------------------------------------------------------------------- queries


def code_digest() -> str:
    """A short sha256 over the sources of app/ and pipeline/, to tie the numbers to a code version."""
    top = Path(__file__).resolve().parents[1]
    sha = hashlib.sha256()
    for path in sorted([*top.glob("app/*.py"), *top.glob("pipeline/*.py")]):
        sha.update(path.relative_to(top).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


# --------------------------------------------------------------------------------------------------- one mode


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeOptions:
    mode: str
    root: str
    repo_path: str
    qdrant_path: str
    engine: str
    queries: int
    lookups: int
    jobs: int
    dim: int
    seed: int


@contextlib.asynccontextmanager
async def opened(
    settings: Any, stub: InProcessStub | None, probe: Probe, timings: dict[str, float]
) -> AsyncIterator[Any]:
    """open_deps with the probe's timed parts, and the in-process stub as the embedder when given; times the
    open and the close."""
    from entry.deps import open_deps

    t0 = time.perf_counter()
    async with open_deps(settings, wrap=ProbeWrap(probe, stub)) as deps:
        timings["open_s"] = time.perf_counter() - t0
        timings["rss_mb_after_open"] = kb_to_mb(status_kb("VmRSS")) or max_rss_mb()
        yield deps
        t1 = time.perf_counter()  # only on a normal exit
    timings["close_s"] = time.perf_counter() - t1


def _progress(label: str, t0: float) -> Callable[[int, int], None]:
    last = [t0]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            print(f"  [{label}] {done:,}/{total:,} files, {now - t0:7.1f} s", file=sys.stderr, flush=True)

    return report


async def index_phase(
    deps: Any, opts: ModeOptions, probe: Probe, label: str, stub: InProcessStub | None
) -> dict[str, Any]:
    from app.sync.local_index import index_directory

    probe.reset()
    stub_s0 = stub.seconds if stub is not None else 0.0
    meter = Meter(peak_resettable=False)
    meter.start()
    run = await index_directory(
        deps,
        Path(opts.root),
        opts.repo_path,
        jobs=opts.jobs,
        progress=_progress(label, meter.wall0),
        steps=timed_steps(probe),
    )
    row = meter.stop()
    c = run.counts
    chunks = c.embedded + c.reused
    seconds = row["seconds"]
    accounted = sum(stat.seconds for stat in probe.stats.values())  # the timed steps never nest
    row.update(
        files=c.files,
        chunks=chunks,
        embedded=c.embedded,
        reused=c.reused,
        deleted=c.deleted,
        skipped=c.skipped,
        skipped_reasons=c.skipped_reasons,
        removed_files=run.removed_files,
        chunks_per_s=rate(chunks, seconds),
        files_per_s=rate(c.files, seconds),
        embedding_inputs_chunks=probe.items("embed chunks"),
        embedding_inputs_other=probe.items("embed other (dimension probe, queries)"),
        steps=probe.to_json(),
        other_seconds=max(0.0, seconds - accounted),
        batch_growth=batch_growth(probe.batches),
    )
    if stub is not None:
        row["stub_seconds"] = stub.seconds - stub_s0
        row["seconds_without_stub"] = seconds - row["stub_seconds"]
        row["chunks_per_s_without_stub"] = rate(chunks, row["seconds_without_stub"])
    return row


async def search_phase(deps: Any, queries: Sequence[Query], names: Sequence[str], probe: Probe) -> dict[str, Any]:
    from app.auth.access import LOCAL
    from app.search.scoping import Filters

    probe.reset()
    meter = Meter(peak_resettable=False)
    meter.start()
    for query in queries[:WARMUP_QUERIES]:  # first-call costs (imports, numpy, connection) stay out
        await deps.search.search(LOCAL, query.text)
    by_kind: dict[str, list[float]] = {}
    every: list[float] = []
    hits = 0
    for query in queries:
        filters = Filters(symbol_type=query.symbol_type, path_prefix=query.path_prefix)
        t0 = time.perf_counter()
        found = await deps.search.search(LOCAL, query.text, filters, 10)
        elapsed = time.perf_counter() - t0
        every.append(elapsed)
        by_kind.setdefault(query.kind, []).append(elapsed)
        hits += bool(found)
    lookups: dict[str, list[float]] = {"symbol": [], "callers": []}
    lookup_hits = {"symbol": 0, "callers": 0}
    for name in names:
        for kind, call in (("symbol", deps.search.symbol), ("callers", deps.search.callers)):
            t0 = time.perf_counter()
            found = await call(LOCAL, name)
            lookups[kind].append(time.perf_counter() - t0)
            lookup_hits[kind] += len(found)
    row = meter.stop()
    row.update(
        search=latency_summary(every),
        search_by_kind={kind: latency_summary(values) for kind, values in sorted(by_kind.items())},
        queries_with_hits=hits,
        lookups={kind: latency_summary(values) for kind, values in lookups.items()},
        lookup_hits=lookup_hits,
        query_embedding=probe.to_json(),
    )
    return row


def mode_settings(opts: ModeOptions, base_url: str | None) -> Any:
    from app.core.settings import ChunkingSettings, EmbeddingSettings, QdrantSettings, Settings

    collection = "javakb_bench_" + opts.mode.replace("-", "_")
    return Settings(
        chunking=ChunkingSettings(include=("**/*.java",), exclude=()),
        embedding=EmbeddingSettings(base_url=base_url, model=STUB_MODEL, provider=None if base_url else "none"),
        qdrant=QdrantSettings(path=opts.qdrant_path, collection=collection, engine=opts.engine),  # type: ignore[arg-type]
    )


async def run_mode(opts: ModeOptions) -> dict[str, Any]:
    """Cold index, searches, re-run with a fresh store, searches again."""
    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING, category=UserWarning)
    probe = Probe()
    result: dict[str, Any] = {
        "mode": opts.mode,
        "engine": opts.engine,
        "qdrant_path": opts.qdrant_path,
        "load_average_start": os.getloadavg(),
    }
    with contextlib.ExitStack() as stack:
        server = None
        if opts.mode == "stub-http":
            server = StubServer(opts.dim)
            stack.callback(server.close)
        stub = InProcessStub(opts.dim) if opts.mode == "stub-inproc" else None
        settings = mode_settings(opts, server.base_url if server is not None else None)
        result["settings"] = json.loads(settings.model_dump_json(exclude={"embedding": {"api_key"}}))

        cold_timings: dict[str, float] = {}
        async with opened(settings, stub, probe, cold_timings) as deps:
            cold = await index_phase(deps, opts, probe, f"{opts.mode} cold", stub)
            cold["disk_mb"] = disk_mb(Path(opts.qdrant_path))
            if server is not None:
                cold["stub_server"] = server.stats()
            t0 = time.perf_counter()
            catalog = await load_catalog(deps)
            result["catalog"] = {"points": len(catalog), "full_scroll_s": time.perf_counter() - t0}
            methods = methods_of(catalog)
            del catalog
            queries = make_queries(methods, opts.queries, opts.seed)
            names = make_lookup_names(methods, opts.lookups, opts.seed)
            result["queries"] = {
                "count": len(queries),
                "digest": digest([q.to_json() for q in queries]),
                "sample": [q.to_json() for q in queries[:: max(1, len(queries) // 12)]],
                "lookup_names": len(names),
                "lookup_digest": digest(names),
                "lookup_sample": names[:8],
            }
            print(f"  [{opts.mode}] searching ({len(queries)} queries, {len(names)} lookups)", file=sys.stderr)
            search_cold = await search_phase(deps, queries, names, probe)
            if server is not None:
                search_cold["stub_server"] = server.stats()
        cold.update(cold_timings)

        rerun_timings: dict[str, float] = {}
        async with opened(settings, stub, probe, rerun_timings) as deps:
            rerun = await index_phase(deps, opts, probe, f"{opts.mode} re-run", stub)
            rerun["disk_mb"] = disk_mb(Path(opts.qdrant_path))
            if server is not None:
                rerun["stub_server"] = server.stats()
            print(f"  [{opts.mode}] searching again", file=sys.stderr)
            search_rerun = await search_phase(deps, queries, names, probe)
            if server is not None:
                search_rerun["stub_server"] = server.stats()
        rerun.update(rerun_timings)
    result.update(cold=cold, search_after_cold=search_cold, rerun=rerun, search_after_rerun=search_rerun)
    result["process_peak_rss_mb"] = max_rss_mb()
    result["load_average_end"] = os.getloadavg()
    result["problems"] = rerun_problems(rerun, server_used=opts.mode == "stub-http")
    return result


def rerun_problems(rerun: dict[str, Any], *, server_used: bool) -> list[str]:
    """What the idle re-run did that it must not: embed, delete or remove anything."""
    problems: list[str] = []
    if rerun["embedded"]:
        problems.append(f"re-run embedded {rerun['embedded']} chunks (must be 0)")
    if rerun["embedding_inputs_chunks"]:
        problems.append(f"re-run sent {rerun['embedding_inputs_chunks']} chunk texts to the embedder (must be 0)")
    if server_used:
        extra = rerun["stub_server"]["inputs"] - rerun["embedding_inputs_other"]
        if extra:
            problems.append(f"the stub server received {extra} unexpected inputs during the re-run")
    if rerun["deleted"] or rerun["removed_files"]:
        problems.append(f"re-run deleted {rerun['deleted']} points and removed {rerun['removed_files']} files")
    return problems


def _mode_child(conn: Connection, opts: ModeOptions) -> None:
    try:
        result = asyncio.run(run_mode(opts))
    except BaseException:
        conn.send({"mode": opts.mode, "error": traceback.format_exc()})
    else:
        conn.send(result)
    finally:
        conn.close()


def run_mode_in_child(opts: ModeOptions) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_mode_child, args=(child, opts), name=f"bench-{opts.mode}")
    process.start()
    child.close()
    try:
        result: dict[str, Any] = parent.recv()
    except EOFError:
        result = {"mode": opts.mode, "error": "the mode's process died without an answer"}
    process.join()
    if process.exitcode and "error" not in result:
        result["error"] = f"the mode's process exited with status {process.exitcode}"
    return result


# --------------------------------------------------------------------------------------------------- report


# --------------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.index_jdk",
        description="Index a JDK module end to end (lexical-only and with a stub embedder), then time searches.",
    )
    add_jdk_arguments(parser)
    parser.add_argument(
        "--module",
        default=DEFAULT_MODULE,
        help="JDK modules, comma-separated, indexed as one repository (default: %(default)s)",
    )
    parser.add_argument("--mode", choices=("lexical", "stub", "both"), default="both", help="default: both")
    parser.add_argument(
        "--stub", choices=("http", "inproc", "both"), default="http", help="which stub embedder (default: http)"
    )
    parser.add_argument("--queries", type=int, default=200, help="searches per measurement (default: 200)")
    parser.add_argument("--lookups", type=int, default=50, help="names for symbol/callers lookups (default: 50)")
    parser.add_argument("--jobs", type=int, default=1, help="index_directory parse processes (default: 1)")
    parser.add_argument("--dim", type=int, default=STUB_DIM, help="stub vector size (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=SEED, help="query sampling seed (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (for quick checks)")
    parser.add_argument("--qdrant-path", type=Path, default=None, metavar="DIR", help="parent of the fresh stores")
    parser.add_argument("--engine", choices=("edge", "local"), default="edge", help="embedded engine (default: edge)")
    parser.add_argument("--keep", action="store_true", help="keep the Qdrant folders afterwards")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    if args.queries < 1 or args.lookups < 0 or args.jobs < 1 or args.dim < 1:
        parser.error("--queries, --jobs and --dim must be >= 1, --lookups >= 0")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    return args


def selected_modes(args: argparse.Namespace) -> list[str]:
    modes = ["lexical"] if args.mode in ("lexical", "both") else []
    if args.mode in ("stub", "both"):
        modes += {"http": ["stub-http"], "inproc": ["stub-inproc"], "both": ["stub-http", "stub-inproc"]}[args.stub]
    return modes


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load_start = os.getloadavg()
    code_at_start = code_digest()
    ensure_extracted(args.src_zip, args.cache_dir)
    modules = [m.strip() for m in args.module.split(",") if m.strip()]
    missing = [m for m in modules if not (args.cache_dir / m).is_dir()]
    if not modules or missing:
        raise SystemExit(f"error: no module {', '.join(missing) or repr(args.module)} in {args.cache_dir}")
    with contextlib.ExitStack() as stack:
        if args.qdrant_path is not None:
            args.qdrant_path.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="javakb-bench-index-", dir=args.qdrant_path))
        if not args.keep:
            stack.callback(shutil.rmtree, work, True)
        root = linked_tree(args.cache_dir, modules, args.limit, work / "tree")
        files, size = count_input(root)
        print(f"{files:,} .java files, {size / MB:.1f} MB under {root}; stores under {work}", file=sys.stderr)
        results: list[dict[str, Any]] = []
        for mode in selected_modes(args):
            print(f"mode {mode} ...", file=sys.stderr, flush=True)
            opts = ModeOptions(
                mode=mode,
                root=str(root),
                repo_path=f"openjdk/jdk17/{'+'.join(modules)}",
                qdrant_path=str(work / mode),
                engine=args.engine,
                queries=args.queries,
                lookups=args.lookups,
                jobs=args.jobs,
                dim=args.dim,
                seed=args.seed,
            )
            results.append(run_mode_in_child(opts))
    uname = os.uname()
    report: dict[str, Any] = {
        "input": {"module": args.module, "root": str(root), "files": files, "bytes": size, "mb": size / MB},
        "options": {
            "modes": selected_modes(args),
            "queries": args.queries,
            "lookups": args.lookups,
            "jobs": args.jobs,
            "stub_dim": args.dim,
            "seed": args.seed,
            "limit": args.limit,
            "warmup_queries": WARMUP_QUERIES,
        },
        "environment": {
            "python": platform.python_version(),
            "qdrant_client": version("qdrant-client"),
            "httpx": version("httpx"),
            "cpu_count": os.cpu_count(),
            "load_average_start": load_start,
            "load_average_end": os.getloadavg(),
            "platform": f"{uname.sysname} {uname.release} {uname.machine}",
            "javakb_env": sorted(k for k in os.environ if k.startswith("JAVAKB_")),
            "code_digest_start": code_at_start,
            "code_digest_end": code_digest(),
        },
        "notes": {
            "qdrant": (
                "Qdrant embedded (local) mode: every point in memory, brute-force search, payload indexes ignored; "
                f"qdrant-client warns above {LOCAL_MODE_THRESHOLD:,} points (warning suppressed). Numbers are our "
                "overhead plus local mode's, not a Qdrant server's."
            ),
        },
        "modes": results,
    }
    print_report(report)
    if args.json is not None:
        write_json(args.json, report)
        print(f"\nwrote {args.json}")
    failed = any("error" in m or m.get("problems") for m in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
