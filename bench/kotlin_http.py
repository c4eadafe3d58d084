"""Count what the Kotlin pipeline reads of a checkout's HTTP: router DSL routes and outbound client calls.

    .venv/bin/python -m bench.kotlin_http DIR [DIR...]

Per directory: the Kotlin files under `src/main/kotlin`, the routes the router DSL gives (each verb and
path a chunk answers `find_endpoint` for, mapping annotations' routes left out), the patterns it could not
read, and the outbound calls of Kotlin chunks (resolved, and unresolved: `?expression`). Numbers to set
against a count made by reading the code (docs/performance.md, "Kotlin HTTP on real code").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from functools import partial
from pathlib import Path

from tree_sitter import Node

from pipeline.field_values import NO_VALUES
from pipeline.kotlin.grammar import parse
from pipeline.kotlin.http import Scope, file_constants
from pipeline.kotlin.routes import declares_routers, read_routes
from pipeline.languages import chunk_file
from pipeline.model import ChunkerConfig, SourceContext, SymbolType

_MAPPINGS = ("Mapping", "Exchange", "Path")


def count(root: Path) -> dict[str, object]:
    """What the pipeline reads of one checkout's Kotlin HTTP."""
    config = ChunkerConfig()
    routes: set[tuple[str, str, str]] = set()
    handlers: Counter[str] = Counter()
    unread = 0
    outbound: Counter[str] = Counter()
    files = sorted(p for p in root.rglob("*.kt") if "src/main/kotlin" in p.as_posix())
    for path in files:
        raw = path.read_bytes()
        relative = path.relative_to(root).as_posix()
        if declares_routers(raw):
            tree = parse(raw).root_node
            unread += read_routes(tree, partial(_pattern, Scope(file_constants(tree), {}, NO_VALUES)))[1]
        result = chunk_file(raw, relative, SourceContext(repo_path="bench/kotlin"), config)
        for chunk in result.chunks:
            if chunk.http_path and not any(a.endswith(_MAPPINGS) for a in chunk.annotation_names):
                kind = "router part" if chunk.symbol_type is SymbolType.METHOD_PART else "function"
                for verb in chunk.http_method:
                    for route_path in chunk.http_path:
                        if (verb, route_path, chunk.qualified_name) not in routes:
                            routes.add((verb, route_path, chunk.qualified_name))
                            handlers[kind] += 1
            for stored in chunk.outbound:
                client, _, _, target = stored.split(" ", 3)
                outbound[f"{client} {'unresolved' if target.startswith('?') else 'resolved'}"] += 1
    return {
        "dir": str(root),
        "kotlin_files": len(files),
        "routes": len(routes),
        "routes_by_chunk": dict(handlers),
        "unread_patterns": unread,
        "outbound": dict(outbound),
    }


def _pattern(scope: Scope, node: Node) -> str | None:
    pieces = scope.pieces(node)
    return "".join(p for p in pieces if isinstance(p, str)) if all(isinstance(p, str) for p in pieces) else None


def main(argv: list[str] | None = None) -> int:
    """Print one JSON line per directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for each in args.dirs:
        sys.stdout.write(json.dumps(count(each)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
