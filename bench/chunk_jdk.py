"""Benchmark the Java pipeline on the JDK's own sources against a bare tree-sitter parse.

Run from the repository root:

    .venv/bin/python -m bench.chunk_jdk                   # java.base, 1 core + 2 processes
    .venv/bin/python -m bench.chunk_jdk --all --jobs 2    # every module of src.zip (15,143 files)

Every file is read into memory before any clock starts, so disk I/O is in neither timing. The bare
baseline calls `pipeline.syntax.parse` on each file; the pipeline run calls `pipeline.chunking.chunk_source`
on the same bytes. Each one-core measurement is repeated `--repeat` times in alternating order and the best
(minimum) time is kept. The parallel run sends batches of (path, bytes) to `--jobs` spawned processes that
return only counts. Exit status: 0 when every file went through, 1 when any file raised (or a worker died),
2 on bad arguments or a missing source zip.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import gc
import hashlib
import json
import math
import multiprocessing
import os
import resource
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from bench.chunk_jdk_report import ParallelResult, SerialResult, Tally, build_report, print_report, report_crashes
from bench.common import (
    DEFAULT_MODULE,
    MB,
    SourceFile,
    add_jdk_arguments,
    ensure_extracted,
    load_files,
    max_rss_mb,
    status_kb,
    write_json,
)
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.records import chunk_record, skipped_record
from pipeline.syntax import parse

CONFIG = ChunkerConfig(include=("**/*.java",), exclude=())
CONTEXT = SourceContext(repo_path="openjdk/jdk17-src")


# --------------------------------------------------------------------------------------------------- input


# --------------------------------------------------------------------------------------------------- runs


def chunk_into(tally: Tally, path: str, data: bytes) -> None:
    """Run the pipeline on one file and add its counts; an exception is recorded as a crash."""
    tally.files += 1
    try:
        result = chunk_source(data, path, CONTEXT, CONFIG)
    except Exception:
        tally.crashes.append((path, traceback.format_exc()))
        return
    tally.chunks += len(result.chunks)
    if result.skipped:
        tally.skipped += len(result.skipped)
        tally.files_with_skips += 1
        tally.skip_reasons.update(str(s.reason) for s in result.skipped)
    if result.parse_errors:
        tally.parse_error_files += 1


def run_bare(files: Sequence[SourceFile], per_file: list[float]) -> tuple[float, int]:
    clock = time.perf_counter
    error_files = 0
    start = clock()
    for i, (_path, data) in enumerate(files):
        t0 = clock()
        if parse(data).root_node.has_error:
            error_files += 1
        elapsed = clock() - t0
        if elapsed < per_file[i]:
            per_file[i] = elapsed
    return clock() - start, error_files


def run_pipeline(files: Sequence[SourceFile], per_file: list[float]) -> tuple[float, Tally]:
    clock = time.perf_counter
    tally = Tally()
    start = clock()
    for i, (path, data) in enumerate(files):
        t0 = clock()
        chunk_into(tally, path, data)
        elapsed = clock() - t0
        if elapsed < per_file[i]:
            per_file[i] = elapsed
    return clock() - start, tally


def run_serial(files: Sequence[SourceFile], repeat: int) -> SerialResult:
    """Bare parse and pipeline on this core, `repeat` times each, alternating which one goes first."""
    warm = files[0]
    parse(warm[1])  # create the thread-local parser outside the clock
    chunk_into(Tally(), *warm)
    bare_per_file = [math.inf] * len(files)
    pipeline_per_file = [math.inf] * len(files)
    bare_times: list[float] = []
    pipeline_times: list[float] = []
    bare_error_files = 0
    tally = Tally()
    for rep in range(repeat):
        order = ("bare", "pipeline") if rep % 2 == 0 else ("pipeline", "bare")
        for which in order:
            gc.collect()
            if which == "bare":
                elapsed, bare_error_files = run_bare(files, bare_per_file)
                bare_times.append(elapsed)
            else:
                elapsed, tally = run_pipeline(files, pipeline_per_file)
                pipeline_times.append(elapsed)
            print(f"  run {rep + 1}/{repeat} {which:<8} {elapsed:8.3f} s", file=sys.stderr, flush=True)
    return SerialResult(bare_times, pipeline_times, bare_error_files, tally, bare_per_file, pipeline_per_file)


def _init_worker() -> None:
    parse(b"class A {}")  # import everything and create the parser before the first batch arrives


def _worker_pid() -> int:
    time.sleep(0.2)  # long enough that each idle worker takes one of these
    return os.getpid()


def own_peak_rss_kb() -> int:
    """This process's own peak RSS (VmHWM of its address space).

    ru_maxrss is not usable inside a spawned worker: Linux carries the parent's RSS at fork time over the exec.
    """
    peak = status_kb("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _worker_batch(batch: list[SourceFile]) -> Tally:
    tally = Tally()
    for path, data in batch:
        chunk_into(tally, path, data)
    tally.worker_peak_rss_kb = own_peak_rss_kb()
    return tally


def _run_batches(
    pool: concurrent.futures.ProcessPoolExecutor, batches: list[list[SourceFile]]
) -> tuple[float, Tally, bool]:
    tally = Tally()
    broken = False
    start = time.perf_counter()
    futures = {pool.submit(_worker_batch, batch): batch for batch in batches}
    for future in concurrent.futures.as_completed(futures):
        try:
            tally.merge(future.result())
        except Exception as exc:  # a worker died (BrokenProcessPool) or the result did not come back
            broken = True
            message = f"worker failed on this batch: {type(exc).__name__}: {exc}"
            tally.files += len(futures[future])
            tally.crashes.extend((path, message) for path, _data in futures[future])
    return time.perf_counter() - start, tally, broken


def start_pool(jobs: int) -> concurrent.futures.ProcessPoolExecutor:
    """Spawn and warm `jobs` workers now, while this process is still small.

    Spawned workers start fresh (no copy of our file list), and starting them before the files are loaded keeps
    RUSAGE_CHILDREN's ru_maxrss about the workers: Linux counts a child's RSS at fork time, before its exec, in it.
    """
    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker)
    pids = {f.result() for f in [pool.submit(_worker_pid) for _ in range(jobs)]}
    if len(pids) < jobs:
        print(f"  note: only {len(pids)} of {jobs} workers answered the warm-up", file=sys.stderr)
    return pool


def run_parallel(
    pool: concurrent.futures.ProcessPoolExecutor, jobs: int, files: Sequence[SourceFile], batch_size: int, repeat: int
) -> ParallelResult:
    """The pipeline over batches of files across the pool's workers; the best of `repeat` wall times is kept."""
    batches = [list(files[i : i + batch_size]) for i in range(0, len(files), batch_size)]
    times: list[float] = []
    tally = Tally()
    broken = False
    for rep in range(repeat):
        gc.collect()
        elapsed, tally, broken = _run_batches(pool, batches)
        times.append(elapsed)
        print(f"  run {rep + 1}/{repeat} {jobs} procs {elapsed:8.3f} s", file=sys.stderr, flush=True)
        if broken:
            break
    return ParallelResult(jobs, len(batches), batch_size, times, tally, broken)


# --------------------------------------------------------------------------------------------------- report


def output_digest(files: Sequence[SourceFile]) -> str:
    """sha256 over everything the pipeline returns for the files (one JSON line per file), untimed.

    Equal digests mean byte-identical output: same chunks, metadata, ids, texts and skipped entries.
    """
    digest = hashlib.sha256()
    for path, data in files:
        result = chunk_source(data, path, CONTEXT, CONFIG)
        line = {
            "file": path,
            "enc": result.encoding,
            "err": result.parse_errors,
            "chunks": [chunk_record(c) for c in result.chunks],
            "skipped": [skipped_record(s) for s in result.skipped],
        }
        digest.update(json.dumps(line, ensure_ascii=False, sort_keys=True).encode() + b"\n")
    return digest.hexdigest()


def pipeline_digest() -> str:
    """A short sha256 over the source of every loaded pipeline module, to tie numbers to a code version.

    It changes with any change of the code; `output_digest` is the one that compares outputs.
    """
    digest = hashlib.sha256()
    for name in sorted(n for n in sys.modules if n == "pipeline" or n.startswith("pipeline.")):
        source = getattr(sys.modules[name], "__file__", None)
        if source is not None:
            digest.update(name.encode() + b"\0" + Path(source).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


# --------------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.chunk_jdk",
        description="Benchmark the Java pipeline on the JDK sources against a bare tree-sitter parse.",
    )
    add_jdk_arguments(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--module", default=DEFAULT_MODULE, help="one JDK module (default: %(default)s)")
    which.add_argument("--all", action="store_true", help="every module in src.zip")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement, best kept (default: 3)")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the parallel run, 0 = skip (default: 2)")
    parser.add_argument("--batch-size", type=int, default=64, help="files per parallel batch (default: 64)")
    parser.add_argument("--no-serial", action="store_true", help="skip the one-core bare/pipeline comparison")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (for quick checks)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument(
        "--output-digest", action="store_true", help="also hash the whole output once, untimed (see output_digest)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.jobs < 0 or args.batch_size < 1 or (args.limit is not None and args.limit < 1):
        parser.error("--repeat, --batch-size and --limit must be >= 1, --jobs >= 0")
    if args.no_serial and args.jobs == 0 and not args.output_digest:
        parser.error("nothing to run: --no-serial with --jobs 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    code_digest = pipeline_digest()  # now, before the sources can change under a long run
    ensure_extracted(args.src_zip, args.cache_dir)
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(start_pool(args.jobs)) if args.jobs > 0 else None
        files = load_files(args.cache_dir, None if args.all else args.module)[: args.limit]
        if not files:
            raise SystemExit(f"error: no .java files found under {args.cache_dir}")
        rss_after_load = max_rss_mb(resource.RUSAGE_SELF)
        size = sum(len(data) for _path, data in files)
        print(f"loaded {len(files):,} files, {size / MB:.1f} MB", file=sys.stderr, flush=True)

        serial = None if args.no_serial else run_serial(files, args.repeat)
        output = output_digest(files) if args.output_digest else None
        rss_after_serial = max_rss_mb(resource.RUSAGE_SELF)
        parallel = None
        if pool is not None:
            parallel = run_parallel(pool, args.jobs, files, args.batch_size, args.repeat)
    # The pool is shut down and its workers reaped here, so RUSAGE_CHILDREN covers them. Read it before anything
    # else forks (platform.platform() runs `uname -p`, a child as big as this process at fork time).
    workers_rss = max_rss_mb(resource.RUSAGE_CHILDREN)

    report = build_report(
        args, files, (rss_after_load, rss_after_serial, workers_rss), code_digest, serial, parallel, output
    )
    print_report(report)
    if args.json is not None:
        write_json(args.json, report)
        print(f"\nwrote {args.json}")
    status = 0
    if report_crashes(report):
        status = 1
    if parallel is not None and serial is not None and not report["parallel"]["counts_match_1_core"]:
        print("ERROR: the parallel run's counts differ from the one-core run's", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
