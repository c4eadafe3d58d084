"""What issue 12's exact lookups gain on real code, and what the chunks of bodiless methods cost.

Run from the repository root on extracted source trees (each a repository; nothing is fetched here):

    .venv/bin/python -m bench.exact_lookups /tmp/exact-repos/macrozheng+mall /tmp/exact-repos/elunez+eladmin
    .venv/bin/python -m bench.exact_lookups --jdk            # java.base from the JDK's src.zip

For every tree it reports: chunks, the bodiless methods that now have a chunk of their own (by the
role of their type: repository, mapper, Feign client...), their share of the embedding text, the
annotations they carry; call sites whose receiver type inherits the method (resolved through the
hierarchy at query time); learned bean stereotypes and the classes they make beans. With
`--index`, it also writes the chunks with and without the bodiless ones to an on-disk local-mode
store (lexical-only) and reports the time and the store size of each; `--lookups N` then times N
callers, callees and injectors lookups on the full index (the hierarchy walks included).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL
from app.search.hierarchy import Declaration, in_order, supertypes
from app.search.service import SearchService
from app.store.indexing import Indexer
from app.store.vectors import IndexModel, VectorStore
from app.sync.localfs import iter_sources
from bench.common import DEFAULT_CACHE_DIR, DEFAULT_MODULE, DEFAULT_SRC_ZIP, ensure_extracted, load_files
from pipeline.chunking import chunk_source
from pipeline.declarations import find_types
from pipeline.members import read_members
from pipeline.model import TYPE_SYMBOLS, Chunk, ChunkerConfig, FileResult, SourceContext, SymbolType
from pipeline.native import read_outline
from pipeline.scope import Scope
from pipeline.spring import learned_stereotypes

JDK_CONFIG = ChunkerConfig(include=("**/*.java",), exclude=())


def sources(root: Path, config: ChunkerConfig) -> list[tuple[str, bytes]]:
    """(path relative to the tree, bytes) of every file the default scope indexes."""
    return [(path, file.read_bytes()) for path, file in iter_sources(root, Scope.from_config(config))]


def bodiless_keys(data: bytes) -> set[tuple[str, int]]:
    """(owner nested name + member name, last row + 1) of every bodiless method and annotation element."""
    outline = read_outline(data).outline
    keys: set[tuple[str, int]] = set()
    for info in find_types(outline.types):
        for member in read_members(info):
            decl = member.decl
            if decl.body_start < 0 and decl.kind != "static_initializer":
                keys.add((f"{decl.owner}.{decl.name}", decl.end_row + 1))
    return keys


def chunk_all(files: Sequence[tuple[str, bytes]], repo: str, config: ChunkerConfig) -> tuple[list[FileResult], float]:
    context = SourceContext(repo_path=repo)
    t0 = time.perf_counter()
    results = [chunk_source(data, path, context, config) for path, data in files]
    return results, time.perf_counter() - t0


def split_bodiless(files: Sequence[tuple[str, bytes]], results: Sequence[FileResult]) -> set[str]:
    """Ids of the chunks of bodiless members."""
    ids: set[str] = set()
    for (_, data), result in zip(files, results, strict=True):
        keys = bodiless_keys(data)
        for c in result.chunks:
            nested = c.qualified_name[len(c.package) + 1 :] if c.package else c.qualified_name
            if c.symbol_type is SymbolType.METHOD and (nested, c.line_end) in keys:
                ids.add(c.id)
    return ids


def hierarchy_calls(chunks: Sequence[Chunk]) -> dict[str, int]:
    """Call sites (`calls_fq`) on an indexed type that does not declare the method, and how many resolve upward."""
    types = {c.qualified_name: c for c in chunks if c.symbol_type in TYPE_SYMBOLS}
    parents = {fq: supertypes(Declaration.of(c)) for fq, c in types.items()}
    declared = {c.qualified_name for c in chunks if c.symbol_type not in TYPE_SYMBOLS}
    on_indexed = resolved = 0
    for chunk in chunks:
        for call in chunk.calls_fq:
            owner, _, method = call.rpartition(".")
            if owner not in types or call in declared:
                continue
            on_indexed += 1
            if any(f"{a}.{method}" in declared for a in in_order(owner, parents)):
                resolved += 1
    return {"calls_on_indexed_types_not_declaring_the_method": on_indexed, "resolved_through_supertypes": resolved}


def stereotypes(chunks: Sequence[Chunk]) -> dict[str, Any]:
    declared = {c.name: c.annotation_names for c in chunks if c.symbol_type is SymbolType.ANNOTATION}
    learned = learned_stereotypes(declared)
    beans = [
        c for c in chunks if c.symbol_type in TYPE_SYMBOLS and c.injects_if_bean and learned & set(c.annotation_names)
    ]
    return {
        "learned": sorted(learned),
        "classes_made_beans": len(beans),
        "injections_gained": sum(len(c.injects_if_bean) for c in beans),
    }


def gains(chunks: Sequence[Chunk], bodiless: set[str]) -> dict[str, Any]:
    types = {c.qualified_name: c for c in chunks if c.symbol_type in TYPE_SYMBOLS}
    new = [c for c in chunks if c.id in bodiless]
    roles = Counter(_role(types.get(c.enclosing_type or "")) for c in new)
    annotations = Counter(a for c in new for a in c.annotation_names)
    text_all = sum(len(c.text) for c in chunks)
    with_body = {c.name for c in chunks if c.id not in bodiless}
    return {
        "chunks": len(chunks),
        "bodiless_chunks": len(new),
        "bodiless_share_of_chunks": round(len(new) / max(len(chunks), 1), 4),
        "bodiless_share_of_embedding_chars": round(sum(len(c.text) for c in new) / max(text_all, 1), 4),
        "bodiless_by_owner_role": dict(roles.most_common()),
        # a bare-name get_symbol of these found nothing before (no method with a body shares the name)
        "bodiless_unfindable_by_name_before": sum(1 for c in new if c.name not in with_body),
        "bodiless_with_annotations": sum(1 for c in new if c.annotation_names),
        "bodiless_top_annotations": dict(annotations.most_common(8)),
        "bodiless_with_route": sum(1 for c in new if c.http_path),
    }


def _role(owner: Chunk | None) -> str:
    if owner is None:
        return "?"
    return owner.stereotype or ("interface" if owner.symbol_type is SymbolType.INTERFACE else str(owner.symbol_type))


async def index_size(
    repo: str, results: Sequence[FileResult], keep: set[str] | None, *, lookups: int = 0
) -> dict[str, Any]:
    """Write the chunks (all, or only `keep`) lexical-only to an on-disk local store: seconds and MB.

    With `lookups`, also time that many callers, callees and injectors lookups (ms, median and max).
    """
    folder = Path(tempfile.mkdtemp(prefix="exact-index-"))
    try:
        store = VectorStore(AsyncQdrantClient(path=str(folder)), "java_code")
        try:
            await store.ensure(IndexModel(embedding_model=None, dimension=None))
            kept = [r if keep is None else _only(r, keep) for r in results]
            t0 = time.perf_counter()
            await Indexer(store, None).write(repo, kept)
            seconds = time.perf_counter() - t0
            timed = await _lookup_latency(SearchService(store, None), [c for r in kept for c in r.chunks], lookups)
        finally:
            await store.close()
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        return {"seconds": round(seconds, 2), "store_mb": round(size / 1e6, 2)} | timed
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _lookup_latency(search: SearchService, chunks: Sequence[Chunk], count: int) -> dict[str, Any]:
    """Callers (bare `Type.method`), callees and injectors of every n-th method and type: ms median / max."""
    if count <= 0:
        return {}
    methods = [c for c in chunks if c.symbol_type is SymbolType.METHOD and c.enclosing_type]
    types = [c for c in chunks if c.symbol_type in TYPE_SYMBOLS]
    picked_methods = methods[:: max(len(methods) // count, 1)][:count]
    picked_types = types[:: max(len(types) // count, 1)][:count]
    out: dict[str, Any] = {}
    for name, calls in (
        (
            "callers",
            [search.callers(LOCAL, f"{(c.enclosing_type or '').rsplit('.', 1)[-1]}.{c.name}") for c in picked_methods],
        ),
        ("callees", [search.callees(LOCAL, c.qualified_name) for c in picked_methods]),
        ("injectors", [search.injectors(LOCAL, c.name) for c in picked_types]),
    ):
        times = []
        for call in calls:
            t0 = time.perf_counter()
            await call
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        out[f"{name}_ms_median_max"] = (round(times[len(times) // 2], 1), round(times[-1], 1))
    return out


def _only(result: FileResult, keep: set[str]) -> FileResult:
    return FileResult(
        file_path=result.file_path,
        chunks=tuple(c for c in result.chunks if c.id in keep),
        skipped=result.skipped,
        encoding=result.encoding,
        parse_errors=result.parse_errors,
    )


async def measure(
    name: str, files: Sequence[tuple[str, bytes]], config: ChunkerConfig, index: bool, lookups: int = 0
) -> dict[str, Any]:
    results, seconds = chunk_all(files, name, config)
    chunks = [c for r in results for c in r.chunks]
    bodiless = split_bodiless(files, results)
    report: dict[str, Any] = {"tree": name, "files": len(files), "chunk_seconds": round(seconds, 2)}
    report |= gains(chunks, bodiless)
    report["hierarchy"] = hierarchy_calls(chunks)
    report["stereotypes"] = stereotypes(chunks)
    if index:
        others = {c.id for c in chunks} - bodiless
        report["index_with_bodiless"] = await index_size(name, results, None, lookups=lookups)
        report["index_without_bodiless"] = await index_size(name, results, others)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", type=Path, help="extracted repositories")
    parser.add_argument("--jdk", action="store_true", help=f"also {DEFAULT_MODULE} from {DEFAULT_SRC_ZIP}")
    parser.add_argument("--index", action="store_true", help="also index with and without the bodiless chunks")
    parser.add_argument("--lookups", type=int, default=0, help="with --index: time this many of each lookup")
    args = parser.parse_args(argv)
    corpora: list[tuple[str, list[tuple[str, bytes]], ChunkerConfig]] = [
        (tree.name, sources(tree, ChunkerConfig()), ChunkerConfig()) for tree in args.trees
    ]
    if args.jdk:
        if not DEFAULT_SRC_ZIP.exists():
            print(f"no {DEFAULT_SRC_ZIP}: apt-get install openjdk-17-source", file=sys.stderr)
            return 2
        ensure_extracted(DEFAULT_SRC_ZIP, DEFAULT_CACHE_DIR)
        jdk = load_files(DEFAULT_CACHE_DIR, DEFAULT_MODULE)
        corpora.append((DEFAULT_MODULE, jdk, JDK_CONFIG))
    for name, files, config in corpora:
        print(asyncio.run(measure(name, files, config, args.index, args.lookups)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
