"""Count the calls between Java and Kotlin (and between Kotlin files) that the chunks' `calls_fq` resolve.

Run from the repository root on a checkout (the default scope, `javakb chunks`' rules):

    .venv/bin/python -m bench.cross_language_calls DIR
    PYTHONPATH=OTHER_TREE .venv/bin/python bench/cross_language_calls.py DIR   # another checkout's pipeline

Each chunk's `calls_fq` is matched to the declarations of the same checkout: a method or function chunk
by its qualified name, a Kotlin top-level function also by `<package>.fn` (the candidate a call from
another file is recorded under), and an accessor (`getX`, `setX`, `isX`) of an indexed type with no chunk
of that name (a Kotlin property, a Java field's bean accessor). Prints one JSON object: files, chunks,
seconds of chunking, and per kind of pair (caller chunk, callee key) how many there are.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

from app.sync.localfs import iter_sources
from pipeline.languages import chunk_file
from pipeline.model import TYPE_SYMBOLS, Chunk, ChunkerConfig, SourceContext
from pipeline.scope import Scope

ACCESSOR_PREFIXES = ("get", "set", "is")


def chunks_of(root: Path) -> tuple[int, list[Chunk], float]:
    """The files in scope, their chunks, and the seconds chunking took (files read before the clock)."""
    files = [(rel, path.read_bytes()) for rel, path in iter_sources(root, Scope.from_config(ChunkerConfig()))]
    start = time.perf_counter()
    found = [
        c
        for rel, data in files
        for c in chunk_file(data, rel, SourceContext(repo_path="bench"), ChunkerConfig()).chunks
    ]
    return len(files), found, time.perf_counter() - start


def pairs(chunks: list[Chunk]) -> dict[str, int]:
    """How many (caller, callee key) pairs of each kind the chunks' `calls_fq` resolve to."""
    types = {c.qualified_name: c.language for c in chunks if c.symbol_type in TYPE_SYMBOLS}
    members = {c.qualified_name: c for c in chunks if c.symbol_type not in TYPE_SYMBOLS}
    facades = {
        f"{m.enclosing_type.rpartition('.')[0]}.{m.name}": m
        for m in members.values()
        if m.language == "kotlin" and m.enclosing_type and m.enclosing_type not in types
    }
    counts: collections.Counter[str] = collections.Counter()
    for chunk in chunks:
        for key in dict.fromkeys(chunk.calls_fq):
            kind = _kind(chunk, key, types, members, facades)
            if kind is not None:
                counts[kind] += 1
    return dict(sorted(counts.items()))


def _kind(
    chunk: Chunk, key: str, types: dict[str, str], members: dict[str, Chunk], facades: dict[str, Chunk]
) -> str | None:
    target = members.get(key)
    if target is not None:
        top = target.enclosing_type not in types and target.file_path != chunk.file_path
        return f"{chunk.language}->{target.language}" + (" top-level, other file" if top else "")
    if key in facades and facades[key].file_path != chunk.file_path:
        return f"{chunk.language}->kotlin top-level, other file, by <package>.fn"
    owner, _, method = key.rpartition(".")
    if owner in types and method.startswith(ACCESSOR_PREFIXES):
        return f"{chunk.language}->{types[owner]} accessor without a chunk"
    return None


def main() -> None:
    """Chunk a checkout and print its cross-language call counts."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    args = parser.parse_args()
    files, chunks, seconds = chunks_of(args.root)
    print(json.dumps({"files": files, "chunks": len(chunks), "seconds": round(seconds, 2), "pairs": pairs(chunks)}))


if __name__ == "__main__":
    main()
