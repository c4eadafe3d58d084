"""Benchmark the Kotlin chunker (`pipeline.kotlin`) against the Java pipeline on sources of a similar size.

Run from the repository root (a folder is walked with the default scope, `javakb chunks`' rules, when any of
its files is in it, else every file of the language is read: the JDK's sources are in no `src/main/java`):

    .venv/bin/python -m bench.chunk_kotlin KOTLIN_DIR JAVA_DIR [--repeat 3]

Every file is read into memory before any clock starts. Java files are taken in path order until their
bytes reach the Kotlin files' total, so both runs chunk about the same amount of source. For each language
the bare tree-sitter parse and the whole chunker (`pipeline.languages.chunk_file`) are timed on one core,
each `--repeat` times, the best kept. Prints one JSON object: files, MB, chunks, skipped (by reason), and
MB/s and files/s of parse and chunker, and the chunker's cost as a multiple of its bare parse.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.sync.localfs import iter_sources
from pipeline.kotlin.grammar import SUFFIX
from pipeline.kotlin.grammar import parse as parse_kotlin
from pipeline.languages import chunk_file
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.scope import Scope
from pipeline.syntax import parse as parse_java

MB = 1024 * 1024


def load(root: Path, suffix: str, limit: int | None) -> list[tuple[str, bytes]]:
    """Files of `root` ending in `suffix` (those in the default scope if any is), in path order, to `limit` bytes."""
    files: list[tuple[str, bytes]] = []
    total = 0
    scoped = [(rel, path) for rel, path in iter_sources(root, Scope.from_config(ChunkerConfig()))]
    every = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob(f"*{suffix}"))
    for rel, path in scoped if any(rel.endswith(suffix) for rel, _ in scoped) else every:
        if not rel.endswith(suffix):
            continue
        if limit is not None and total >= limit:
            break
        raw = path.read_bytes()
        files.append((rel, raw))
        total += len(raw)
    return files


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(files: Sequence[tuple[str, bytes]], parse: Callable[[bytes], Any], repeat: int) -> dict[str, Any]:
    context, config = SourceContext(repo_path="bench"), ChunkerConfig()
    results = [chunk_file(raw, rel, context, config) for rel, raw in files]
    size = sum(len(raw) for _, raw in files) / MB
    parse_s = best(lambda: [parse(raw) for _, raw in files], repeat)
    chunk_s = best(lambda: [chunk_file(raw, rel, context, config) for rel, raw in files], repeat)
    skipped = collections.Counter(s.reason.value for r in results for s in r.skipped)
    return {
        "files": len(files),
        "mb": round(size, 2),
        "chunks": sum(len(r.chunks) for r in results),
        "files_with_parse_errors": sum(1 for r in results if r.parse_errors),
        "skipped": dict(skipped),
        "parse_s": round(parse_s, 3),
        "chunk_s": round(chunk_s, 3),
        "parse_mb_per_s": round(size / parse_s, 2),
        "chunk_mb_per_s": round(size / chunk_s, 2),
        "chunk_files_per_s": round(len(files) / chunk_s, 1),
        "chunk_over_parse": round(chunk_s / parse_s, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("kotlin", type=Path)
    parser.add_argument("java", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    kotlin = load(args.kotlin, SUFFIX, None)
    java = load(args.java, ".java", sum(len(raw) for _, raw in kotlin))
    report = {
        "kotlin": measure(kotlin, parse_kotlin, args.repeat),
        "java": measure(java, parse_java, args.repeat),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
