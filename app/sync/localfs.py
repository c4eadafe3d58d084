"""Read Java sources from a local directory with the same scope rules as the GitLab sync."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, FileResult, Skipped, SkipReason, SourceContext
from pipeline.scope import Scope

# Never worth descending into: version control and tool caches.
_PRUNED_DIRS = frozenset({".git", ".hg", ".svn", ".idea", ".gradle", "node_modules", "__pycache__"})


def iter_sources(root: Path, scope: Scope) -> Iterator[tuple[str, Path]]:
    """Repository-relative POSIX paths in scope under `root`, with their file paths, in sorted order."""
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _PRUNED_DIRS)
        base = Path(dirpath)
        for name in filenames:
            path = base / name
            rel = path.relative_to(root).as_posix()
            if scope.matches(rel):
                found.append((rel, path))
    yield from sorted(found)


def chunk_local_file(rel: str, path: Path, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """Read and chunk one file; an unreadable file is a `Skipped` result, not an exception."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return FileResult(
            file_path=rel, skipped=(Skipped(file_path=rel, reason=SkipReason.UNREADABLE, detail=str(exc)),)
        )
    return chunk_source(raw, rel, context, config)


def chunk_local_files(
    files: list[tuple[str, Path]], context: SourceContext, config: ChunkerConfig, jobs: int = 1
) -> Iterator[FileResult]:
    """Chunk files in order, across `jobs` processes when asked (parsing is CPU-bound)."""
    if jobs <= 1 or len(files) < 2:
        for rel, path in files:
            yield chunk_local_file(rel, path, context, config)
        return
    work = partial(_chunk_pair, context=context, config=config)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(work, files, chunksize=max(1, min(64, len(files) // (jobs * 4))))


def _chunk_pair(item: tuple[str, Path], *, context: SourceContext, config: ChunkerConfig) -> FileResult:
    return chunk_local_file(item[0], item[1], context, config)
