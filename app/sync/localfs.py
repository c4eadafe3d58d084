"""Read Java sources from a local directory with the same scope rules as the GitLab sync."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import pipeline
from app.store import payloads, routes
from pipeline.languages import chunk_file
from pipeline.model import ChunkerConfig, FileResult, Skipped, SkipReason, SourceContext
from pipeline.scope import Scope

# Never worth descending into: version control and tool caches.
_PRUNED_DIRS = frozenset({".git", ".hg", ".svn", ".idea", ".gradle", "node_modules", "__pycache__"})
_SOURCE_ROOTS = (("src", "main", "java"), ("src", "main", "kotlin"))  # Maven/Gradle layouts


def iter_sources(root: Path, scope: Scope) -> Iterator[tuple[str, Path]]:
    """Paths relative to `root` (POSIX) in scope under `root`, with their file paths, in sorted order.

    A file is in scope when its path from `root`, or from its repository root (`scope_prefix`), matches
    the scope: a directory inside `src/main/java` is walked like the checkout holding it, and a checkout
    root walks exactly what it did before. The paths yielded stay relative to `root`.
    """
    in_scope = _in_scope(root, scope)
    yield from sorted((rel, Path(full)) for rel, full in walk_names(root) if in_scope(rel))


def left_out_java(root: Path, scope: Scope) -> int:
    """How many `.java` files under `root` the scope rules leave out (what `iter_sources` does not yield)."""
    in_scope = _in_scope(root, scope)
    return sum(1 for rel, _ in walk_names(root) if rel.endswith(".java") and not in_scope(rel))


def in_scope(root: Path, scope: Scope) -> Callable[[str], bool]:
    """Whether a path from `root` is in scope, from `root` or from its repository root (`iter_sources`' rule)."""
    return _in_scope(root, scope)


def _in_scope(root: Path, scope: Scope) -> Callable[[str], bool]:
    prefix = scope_prefix(root)
    if not prefix:
        return scope.matches
    return lambda rel: scope.matches(rel) or scope.matches(prefix + rel)


def scope_prefix(root: Path) -> str:
    """`root`'s path from its repository root, with a trailing `/` ("" at the root itself or outside a repository).

    The repository root is the nearest ancestor holding `.git`; without one, the ancestor above the last
    `src/main/java` (or `src/main/kotlin`) in the path (a Maven/Gradle layout), if any.
    """
    resolved = root.resolve()
    top = next((d for d in (resolved, *resolved.parents) if (d / ".git").exists()), None)
    if top is None:
        parts = resolved.parts
        starts = [i for i in range(len(parts) - 2) if parts[i : i + 3] in _SOURCE_ROOTS]
        top = Path(*parts[: starts[-1]]) if starts else resolved
    rel = resolved.relative_to(top).as_posix()
    return "" if rel == "." else rel + "/"


def walk_names(root: Path) -> Iterator[tuple[str, str]]:
    """Every file under `root`: its path from `root` (POSIX) and its full path, version control and tool caches pruned.

    Strings, no `Path` per file: a status answer walks every local working tree (`local_project.tree_state`).
    """
    top = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in _PRUNED_DIRS)
        base = os.path.relpath(dirpath, top).replace(os.sep, "/")
        prefix = "" if base == "." else base + "/"
        for name in filenames:
            yield prefix + name, os.path.join(dirpath, name)


FILES_PER_PROCESS = 100  # parse processes pay off from about this many files each (a file takes a few ms)
CHUNKER_MODULES = (pipeline, payloads, routes)
"""What turns a file's bytes into stored payloads: a change to any of their sources changes every source hash."""


@functools.cache
def chunker_digest() -> bytes:
    """A digest of the sources of `CHUNKER_MODULES` (the pipeline package's every module): this code's version."""
    sha = hashlib.sha256()
    for module in CHUNKER_MODULES:
        location = Path(module.__file__ or "")
        files = sorted(location.parent.rglob("*.py")) if location.name == "__init__.py" else [location]
        for path in files:  # subpackages too (`pipeline.kotlin`)
            name = path.relative_to(location.parent).as_posix()
            sha.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.digest()


def source_hash(raw: bytes, context: SourceContext, config: ChunkerConfig) -> str:
    """What identifies a file's chunks before chunking it: its bytes, where it comes from, the chunker and its config.

    Equal source hashes give equal chunks and payloads (`javakb index` skips such a file: nothing to parse).
    """
    sha = hashlib.sha256(chunker_digest())
    sha.update(repr((context, config)).encode() + b"\0" + raw)
    return sha.hexdigest()


def source_hashes(files: Sequence[tuple[str, Path]], context: SourceContext, config: ChunkerConfig) -> dict[str, str]:
    """The source hash of every readable file (an unreadable one is left out: it is chunked, and skipped there)."""
    found: dict[str, str] = {}
    for rel, path in files:
        try:
            found[rel] = source_hash(path.read_bytes(), context, config)
        except OSError:
            continue
    return found


def chunk_local_file(rel: str, path: Path, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """Read and chunk one file; an unreadable file is a `Skipped` result, not an exception."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return FileResult(
            file_path=rel, skipped=(Skipped(file_path=rel, reason=SkipReason.UNREADABLE, detail=str(exc)),)
        )
    return chunk_file(raw, rel, context, config)


def chunk_local_files(
    files: list[tuple[str, Path]],
    context: SourceContext,
    config: ChunkerConfig,
    jobs: int = 1,
    *,
    files_per_process: int = FILES_PER_PROCESS,
) -> Iterator[FileResult]:
    """Chunk files in order, across `jobs` processes when asked (parsing is CPU-bound) and worth it.

    Starting the processes costs more than parsing a few files (forking a process that holds a large
    store took 8 s for 57 files on the loaded machine): below `files_per_process` files a job they run here.
    """
    if jobs <= 1 or len(files) < max(2, jobs * files_per_process):
        for rel, path in files:
            yield chunk_local_file(rel, path, context, config)
        return
    work = partial(_chunk_pair, context=context, config=config)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(work, files, chunksize=max(1, min(64, len(files) // (jobs * 4))))


def _chunk_pair(item: tuple[str, Path], *, context: SourceContext, config: ChunkerConfig) -> FileResult:
    return chunk_local_file(item[0], item[1], context, config)
