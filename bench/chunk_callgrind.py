"""The instruction-count check of the Java pipeline: run under callgrind, which counts the same under any load.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python -m bench.chunk_callgrind MODE

MODE is `imports` (imports and one warm-up file only), `parse` (bare tree-sitter parse) or `pipeline`
(`chunk_source`), each over the first 150 files of java.base/java/util (sorted). Subtract the
`imports` count from the other two: parse and pipeline instructions, and their ratio (issue 25 asks
≤ 2.0x; docs/performance.md, "One reader, public API only").
"""

from __future__ import annotations

import sys

from bench.chunk_jdk import CONFIG, CONTEXT
from bench.common import DEFAULT_CACHE_DIR, load_files
from pipeline.chunking import chunk_source
from pipeline.syntax import parse

FILES = 150
PREFIX = "java.base/java/util/"


def main(mode: str) -> int:
    if mode not in ("imports", "parse", "pipeline"):
        raise SystemExit("usage: python -m bench.chunk_callgrind imports|parse|pipeline")
    files = [f for f in load_files(DEFAULT_CACHE_DIR, "java.base") if f[0].startswith(PREFIX)][:FILES]
    parse(b"class A {}")
    chunk_source(b"class A { void f() { g(); } }", "A.java", CONTEXT, CONFIG)
    for path, data in files if mode != "imports" else ():
        if mode == "parse":
            parse(data)
        else:
            chunk_source(data, path, CONTEXT, CONFIG)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
