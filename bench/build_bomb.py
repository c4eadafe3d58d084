"""Benchmark: `read_builds` on a property bomb (issue 24), and on a plain pom of the same size as a yardstick.

Run from the repository root:

    .venv/bin/python -m bench.build_bomb                      # 6 copies: the 332-byte pom of issue 24
    .venv/bin/python -m bench.build_bomb --copies 4 --tree /tmp/before   # a checkout before the bounds

The bomb's property repeats itself `--copies` times and a dependency's version names it, so without
bounds interpolation grows copies^10 (ten rounds of nesting followed). `--tree` imports
`pipeline.buildfiles` from another checkout of this repository instead (the baseline: a worktree of
the commit before the bounds). Prints the pom's size, the seconds `read_builds` took, the longest
version it produced, its problems, and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import importlib
import resource
import sys
import time


def bomb(copies: int) -> bytes:
    """The pom: its property `a` is `${a}` written `copies` times, and a dependency's version is `${a}`."""
    return (
        "<project><groupId>com.acme</groupId><artifactId>bomb</artifactId><version>1</version>"
        f"<properties><a>{'${a}' * copies}</a></properties><dependencies>"
        "<dependency><groupId>org.x</groupId><artifactId>y</artifactId><version>${a}</version></dependency>"
        "</dependencies></project>"
    ).encode()


def plain(size: int) -> bytes:
    """A pom of about `size` bytes with an ordinary property, for comparison."""
    data = bomb(1).replace(b"${a}</a>", b"1.0</a>")
    return data.replace(b"<project>", b"<project>" + b" " * max(size - len(data), 0), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--tree", help="import pipeline.buildfiles from this checkout (a baseline)")
    args = parser.parse_args()
    if args.tree:
        sys.path.insert(0, args.tree)
    buildfiles = importlib.import_module("pipeline.buildfiles")
    print(f"pipeline.buildfiles from {buildfiles.__file__}")
    data = bomb(args.copies)
    for name, pom in (("plain", plain(len(data))), (f"bomb x{args.copies}", data)):
        start = time.perf_counter()
        reading = buildfiles.read_builds({"pom.xml": pom})
        seconds = time.perf_counter() - start
        longest = max((len(d.version) for d in reading.dependencies), default=0)
        problems = [p.detail for p in reading.problems]
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{name:<10} {len(pom):>4} bytes  {seconds:8.3f} s  longest version {longest:>11,} chars  "
              f"peak {peak_mib:7.1f} MiB  problems {problems}")  # fmt: skip


if __name__ == "__main__":
    main()
