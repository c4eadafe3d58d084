"""One entry point for every source language the index reads: a file's suffix picks its chunker.

`.kt` files go to `pipeline.kotlin`, every other file to the Java chunker (`pipeline.chunking`), as
before Kotlin existed. It is a folder of its own so that no module of `pipeline` imports `pipeline.kotlin`,
which imports them (tests/app/test_layers.py: no circle between folders).
"""

from __future__ import annotations

from pipeline.chunking import chunk_source
from pipeline.kotlin.chunker import chunk_kotlin
from pipeline.kotlin.grammar import SUFFIX as KOTLIN_SUFFIX
from pipeline.model import ChunkerConfig, FileResult, SourceContext


def chunk_file(raw: bytes, file_path: str, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """Chunk one source file with its language's chunker. Bad input comes back as `Skipped` entries, never raised."""
    if file_path.endswith(KOTLIN_SUFFIX):
        return chunk_kotlin(raw, file_path, context, config)
    return chunk_source(raw, file_path, context, config)
