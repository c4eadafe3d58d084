"""Benchmark: `read_builds` on a property bomb (issue 24), and on a plain pom of the same size as a yardstick.

Run from the repository root:

    .venv/bin/python -m bench.build_bomb                      # 6 copies: the 332-byte pom of issue 24
    .venv/bin/python -m bench.build_bomb --copies 4 --tree /tmp/before   # a checkout before the bounds
    .venv/bin/python -m bench.build_bomb --modules 200 --root-kib 800     # Gradle: a large root, many modules
    .venv/bin/python -m bench.build_bomb --runs 8000                      # runs of blanks and of `${`

The bomb's property repeats itself `--copies` times and a dependency's version names it, so without
bounds interpolation grows copies^10 (ten rounds of nesting followed). `--tree` imports
`pipeline.buildfiles` from another checkout of this repository instead (the baseline: a worktree of
the commit before the bounds). Prints the pom's size, the seconds `read_builds` took, the longest
version it produced, its problems, and the process's peak resident memory. `--modules` reads a Gradle
build instead: a root `build.gradle` of `--root-kib` KiB of assignments and that many module scripts
below it, each naming a root variable (every module's scope holds the root script). `--runs N` reads
a `build.gradle` with N blanks after `implementation` and a pom whose version is `${` written N times
(patterns that backtracked N^2 before).
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


def gradle(modules: int, root_kib: int) -> dict[str, bytes]:
    """A root script of `root_kib` KiB of assignments and `modules` module scripts that use one of them."""
    root = b"x = '1'\n" * (root_kib * 128)
    return {"build.gradle": root, **{f"m{i}/build.gradle": b"implementation 'a:b:$x'\n" for i in range(modules)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--modules", type=int, default=0, help="read a Gradle build of this many modules instead")
    parser.add_argument("--root-kib", type=int, default=800)
    parser.add_argument("--runs", type=int, default=0, help="read runs of this many blanks and `${` instead")
    parser.add_argument("--tree", help="import pipeline.buildfiles from this checkout (a baseline)")
    args = parser.parse_args()
    if args.tree:
        sys.path.insert(0, args.tree)
    buildfiles = importlib.import_module("pipeline.buildfiles")
    print(f"pipeline.buildfiles from {buildfiles.__file__}")
    data = bomb(args.copies)
    cases = [("plain", {"pom.xml": plain(len(data))}), (f"bomb x{args.copies}", {"pom.xml": data})]
    if args.modules:
        cases = [(f"gradle {args.modules} modules", gradle(args.modules, args.root_kib))]
    if args.runs:
        blanks = f"implementation{' ' * args.runs}x\n".encode()
        opening = bomb(1).replace(b"<version>${a}</version>", b"<version>" + b"${" * args.runs + b"</version>")
        cases = [(f"{args.runs} blanks", {"build.gradle": blanks}), (f"{args.runs} x ${{", {"pom.xml": opening})]
    for name, files in cases:
        start = time.perf_counter()
        reading = buildfiles.read_builds(files)
        seconds = time.perf_counter() - start
        longest = max((len(d.version) for d in reading.dependencies), default=0)
        problems = [p.detail for p in reading.problems]
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size = sum(len(d) for d in files.values())
        print(f"{name:<10} {size:>4} bytes  {seconds:8.3f} s  longest version {longest:>11,} chars  "
              f"peak {peak_mib:7.1f} MiB  problems {problems}")  # fmt: skip


if __name__ == "__main__":
    main()
