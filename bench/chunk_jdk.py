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
import collections
import concurrent.futures
import contextlib
import gc
import hashlib
import json
import math
import multiprocessing
import os
import platform
import resource
import shutil
import sys
import time
import traceback
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.records import chunk_record, skipped_record
from pipeline.syntax import parse

DEFAULT_SRC_ZIP = Path("/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip")
DEFAULT_CACHE_DIR = Path("/tmp/javakb-bench/jdk17")
DEFAULT_MODULE = "java.base"
EXTRACTED_MARKER = ".javakb-bench-extracted"
TARGET_RATIO = 2.0
MB = 1_000_000
SLOWEST_SHOWN = 10

CONFIG = ChunkerConfig(include=("**/*.java",), exclude=())
CONTEXT = SourceContext(repo_path="openjdk/jdk17-src")

SourceFile = tuple[str, bytes]


@dataclass(slots=True)
class Tally:
    """Counts from running the pipeline over some files; all a worker sends back."""

    files: int = 0
    chunks: int = 0
    skipped: int = 0
    files_with_skips: int = 0
    parse_error_files: int = 0
    worker_peak_rss_kb: int = 0
    skip_reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    crashes: list[tuple[str, str]] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        self.files += other.files
        self.chunks += other.chunks
        self.skipped += other.skipped
        self.files_with_skips += other.files_with_skips
        self.parse_error_files += other.parse_error_files
        self.worker_peak_rss_kb = max(self.worker_peak_rss_kb, other.worker_peak_rss_kb)
        self.skip_reasons.update(other.skip_reasons)
        self.crashes.extend(other.crashes)

    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.files, self.chunks, self.skipped, self.files_with_skips, self.parse_error_files)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "chunks": self.chunks,
            "skipped": self.skipped,
            "files_with_skips": self.files_with_skips,
            "parse_error_files": self.parse_error_files,
            "skip_reasons": dict(sorted(self.skip_reasons.items())),
            "crashed_files": len(self.crashes),
            "crashes": [{"file_path": path, "traceback": tb} for path, tb in self.crashes],
        }


@dataclass(slots=True)
class SerialResult:
    bare_times: list[float]
    pipeline_times: list[float]
    bare_error_files: int
    tally: Tally
    bare_per_file: list[float]
    pipeline_per_file: list[float]


@dataclass(slots=True)
class ParallelResult:
    jobs: int
    batches: int
    batch_size: int
    times: list[float]
    tally: Tally
    broken: bool


# --------------------------------------------------------------------------------------------------- input


def ensure_extracted(src_zip: Path, cache_dir: Path) -> None:
    """Unzip src.zip into cache_dir unless an earlier run already did (marker file present)."""
    if (cache_dir / EXTRACTED_MARKER).is_file():
        return
    if cache_dir.exists() and any(cache_dir.iterdir()):
        raise SystemExit(
            f"error: {cache_dir} exists but was not extracted by this script (no {EXTRACTED_MARKER}); "
            "remove it or pass another --cache-dir"
        )
    if not src_zip.is_file():
        raise SystemExit(f"error: {src_zip} not found (apt-get install openjdk-17-source, or pass --src-zip)")
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    partial = cache_dir.with_name(f"{cache_dir.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    print(f"extracting {src_zip} -> {cache_dir} (once) ...", file=sys.stderr, flush=True)
    with zipfile.ZipFile(src_zip) as archive:
        archive.extractall(partial)
    (partial / EXTRACTED_MARKER).write_text(f"{src_zip.resolve()}\n", encoding="utf-8")
    if cache_dir.exists():
        cache_dir.rmdir()  # empty, checked above
    partial.rename(cache_dir)


def load_files(cache_dir: Path, module: str | None) -> list[SourceFile]:
    """Read every .java file of one module (or of all when module is None) into memory, sorted by path."""
    modules = sorted(p for p in cache_dir.iterdir() if p.is_dir())
    if module is not None:
        if not (cache_dir / module).is_dir():
            names = ", ".join(p.name for p in modules)
            raise SystemExit(f"error: no module {module!r} in {cache_dir}; available: {names}")
        modules = [cache_dir / module]
    paths = sorted((p for root in modules for p in root.rglob("*.java") if p.is_file()), key=lambda p: p.as_posix())
    return [(p.relative_to(cache_dir).as_posix(), p.read_bytes()) for p in paths]


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
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


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


def max_rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss * 1024 / MB  # ru_maxrss is in KiB on Linux


def rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else math.inf


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def run_row(name: str, seconds: float, files: int, size: int, tally: Tally | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run": name,
        "seconds": seconds,
        "files_per_s": rate(files, seconds),
        "mb_per_s": rate(size / MB, seconds),
    }
    if tally is not None:
        row.update(chunks=tally.chunks, skipped=tally.skipped, crashed_files=len(tally.crashes))
    return row


def slowest_files(files: Sequence[SourceFile], serial: SerialResult) -> list[dict[str, Any]]:
    order = sorted(range(len(files)), key=lambda i: serial.pipeline_per_file[i], reverse=True)[:SLOWEST_SHOWN]
    return [
        {
            "file_path": files[i][0],
            "bytes": len(files[i][1]),
            "pipeline_s": serial.pipeline_per_file[i],
            "bare_s": serial.bare_per_file[i],
            "ratio": rate(serial.pipeline_per_file[i], serial.bare_per_file[i]),
        }
        for i in order
    ]


def build_report(
    args: argparse.Namespace,
    files: Sequence[SourceFile],
    peak_rss: tuple[float, float, float],
    code_digest: str,
    serial: SerialResult | None,
    parallel: ParallelResult | None,
    output: str | None = None,
) -> dict[str, Any]:
    """All numbers of the run; peak_rss is (main after loading, main at the end, workers) in MB.

    `output` is the run's `output_digest`, when asked for.
    """
    size = sum(len(data) for _path, data in files)
    uname = os.uname()
    report: dict[str, Any] = {
        "input": {
            "src_zip": str(args.src_zip),
            "cache_dir": str(args.cache_dir),
            "modules": "all" if args.all else args.module,
            "files": len(files),
            "bytes": size,
            "mb": size / MB,
        },
        "settings": {"repeat": args.repeat, "jobs": args.jobs, "batch_size": args.batch_size, "limit": args.limit},
        "environment": {
            "python": platform.python_version(),
            "tree_sitter": version("tree-sitter"),
            "tree_sitter_java": version("tree-sitter-java"),
            "cpu_count": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
            "pipeline_digest": code_digest,
            "output_digest": output,
            "platform": f"{uname.sysname} {uname.release} {uname.machine}",
        },
        "runs": [],
        "peak_rss_mb": {"after_load": peak_rss[0], "main": peak_rss[1], "workers": None, "workers_vmhwm": None},
    }
    if serial is not None:
        bare, pipe = min(serial.bare_times), min(serial.pipeline_times)
        report["runs"].append(run_row("bare parse, 1 core", bare, len(files), size, None))
        report["runs"].append(run_row("pipeline, 1 core", pipe, len(files), size, serial.tally))
        report["serial"] = {
            "bare_times": serial.bare_times,
            "pipeline_times": serial.pipeline_times,
            "bare_best_s": bare,
            "pipeline_best_s": pipe,
            "ratio_pipeline_over_bare": rate(pipe, bare),
            "target_ratio": TARGET_RATIO,
            "bare_error_files": serial.bare_error_files,
            "pipeline": serial.tally.to_json(),
            "slowest_files": slowest_files(files, serial),
        }
    if parallel is not None:
        best = min(parallel.times)
        name = f"pipeline, {parallel.jobs} procs"
        report["runs"].append(run_row(name, best, len(files), size, parallel.tally))
        report["peak_rss_mb"]["workers"] = peak_rss[2]
        report["peak_rss_mb"]["workers_vmhwm"] = parallel.tally.worker_peak_rss_kb * 1024 / MB
        report["parallel"] = {
            "jobs": parallel.jobs,
            "batches": parallel.batches,
            "batch_size": parallel.batch_size,
            "times": parallel.times,
            "best_s": best,
            "worker_died": parallel.broken,
            "pipeline": parallel.tally.to_json(),
        }
        if serial is not None:
            report["parallel"]["speedup_vs_1_core"] = rate(min(serial.pipeline_times), best)
            report["parallel"]["counts_match_1_core"] = parallel.tally.counts() == serial.tally.counts()
    return report


def print_report(report: dict[str, Any]) -> None:
    inp, env = report["input"], report["environment"]
    print()
    print(f"JDK sources: {inp['modules']}  {inp['files']:,} files  {inp['mb']:.1f} MB  ({inp['cache_dir']})")
    print(
        f"python {env['python']}, tree-sitter {env['tree_sitter']}, tree-sitter-java {env['tree_sitter_java']}, "
        f"{env['cpu_count']} cpus, load avg {env['load_average_at_end'][0]:.2f} at end; "
        f"best of {report['settings']['repeat']}; MB = 10^6 bytes; pipeline digest {env['pipeline_digest']}"
    )
    if env["output_digest"] is not None:
        print(f"output digest (sha256 of every chunk and skipped entry): {env['output_digest']}")
    print()
    print(f"{'run':<22}{'time s':>10}{'files/s':>11}{'MB/s':>9}{'chunks':>10}{'skipped':>9}{'crashed':>9}")
    for row in report["runs"]:
        line = f"{row['run']:<22}{row['seconds']:>10.3f}{row['files_per_s']:>11.1f}{row['mb_per_s']:>9.2f}"
        if "chunks" in row:
            line += f"{row['chunks']:>10,}{row['skipped']:>9,}{row['crashed_files']:>9,}"
        print(line)
    print()
    serial, parallel, rss = report.get("serial"), report.get("parallel"), report["peak_rss_mb"]
    if serial is not None:
        pipe = serial["pipeline"]
        print(f"ratio pipeline/bare = {serial['ratio_pipeline_over_bare']:.2f}x (target <= {TARGET_RATIO:.1f}x)")
        print(f"bare {fmt_times(serial['bare_times'])}; pipeline {fmt_times(serial['pipeline_times'])}")
        print(
            f"skipped: {pipe['skipped']:,} entries in {pipe['files_with_skips']:,} files {pipe['skip_reasons']}; "
            f"files with syntax errors: bare {serial['bare_error_files']:,}, pipeline {pipe['parse_error_files']:,}"
        )
    if parallel is not None:
        line = f"{parallel['jobs']} procs {fmt_times(parallel['times'])}, {parallel['batches']} batches"
        if "speedup_vs_1_core" in parallel:
            line += f"; speedup vs 1 core {parallel['speedup_vs_1_core']:.2f}x"
            line += "; counts match 1 core" if parallel["counts_match_1_core"] else "; COUNTS DIFFER FROM 1 CORE"
        print(line)
    workers = "n/a"
    if rss["workers"] is not None:
        workers = f"{rss['workers']:.0f} MB (RUSAGE_CHILDREN; own VmHWM max {rss['workers_vmhwm']:.0f} MB)"
    print(f"peak RSS: main {rss['main']:.0f} MB (after loading files {rss['after_load']:.0f} MB), workers {workers}")
    if serial is not None:
        print(f"\nslowest files (pipeline, best of {report['settings']['repeat']}):")
        for item in serial["slowest_files"]:
            print(
                f"  {item['pipeline_s'] * 1000:9.1f} ms  bare {item['bare_s'] * 1000:7.1f} ms  "
                f"{item['ratio']:6.1f}x  {item['bytes']:>9,} B  {item['file_path']}"
            )


def fmt_times(times: list[float]) -> str:
    return "[" + ", ".join(f"{t:.3f}" for t in times) + "] s"


def report_crashes(report: dict[str, Any]) -> int:
    """Print every file that raised; return how many distinct files did."""
    crashed: dict[str, str] = {}
    for section in ("serial", "parallel"):
        if section in report:
            for crash in report[section]["pipeline"]["crashes"]:
                crashed.setdefault(crash["file_path"], crash["traceback"])
    if crashed:
        print(f"\nCRASH: the pipeline raised on {len(crashed)} file(s):", file=sys.stderr)
        by_traceback: dict[str, list[str]] = collections.defaultdict(list)
        for path, tb in crashed.items():
            by_traceback[tb].append(path)
        for tb, paths in by_traceback.items():  # files that failed the same way share one traceback
            print("\n".join(f"--- {path}" for path in paths), file=sys.stderr)
            print(tb.rstrip(), file=sys.stderr)
    return len(crashed)


# --------------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.chunk_jdk",
        description="Benchmark the Java pipeline on the JDK sources against a bare tree-sitter parse.",
    )
    parser.add_argument("--src-zip", type=Path, default=DEFAULT_SRC_ZIP, help="JDK src.zip (default: %(default)s)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="extracted once (%(default)s)")
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
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
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
