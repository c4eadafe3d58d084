"""The report of `bench.chunk_jdk`: the JSON document and its printed summary."""

from __future__ import annotations

import argparse
import collections
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.common import MB, SourceFile, rate, version

TARGET_RATIO = 2.0


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


SLOWEST_SHOWN = 10


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
