"""Chunk small inline Java sources with the real pipeline, and pick chunks out of the result."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pipeline.chunking import chunk_source
from pipeline.model import Chunk, ChunkerConfig, FileResult, SourceContext, SymbolType

REPO = "demo/repo"


def chunk_java(
    source: str | bytes,
    file_path: str = "src/main/java/demo/Sample.java",
    *,
    config: ChunkerConfig | None = None,
    repo: str = REPO,
) -> FileResult:
    """Run `chunk_source` over a source given as text (UTF-8) or raw bytes."""
    raw = source.encode("utf-8") if isinstance(source, str) else source
    return chunk_source(raw, file_path, SourceContext(repo_path=repo), config or ChunkerConfig())


def only(result: FileResult, qualified_name: str) -> Chunk:
    """The single chunk with this qualified name."""
    found = [c for c in result.chunks if c.qualified_name == qualified_name]
    names = [c.qualified_name for c in result.chunks]
    assert len(found) == 1, f"{qualified_name}: {len(found)} chunks among {names}"
    return found[0]


def header_chunk(**fields: Any) -> Chunk:
    """A method chunk of `demo.A.m` with the given fields changed, for tests of what its header says."""
    base = Chunk(
        id="", repo_path="acme/shop", gitlab_project_id=None, commit_sha=None, branch=None, file_path="A.java",
        package="demo", qualified_name="demo.A.m", symbol_type=SymbolType.METHOD, name="m", signature="m(): void",
        enclosing_type="demo.A", line_start=1, line_end=1, content_hash="", code="", text="",
    )  # fmt: skip
    return replace(base, **fields)
