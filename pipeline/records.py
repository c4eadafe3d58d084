"""Plain JSON-ready views of pipeline values (the CLI's output and, later, the store's payload)."""

from __future__ import annotations

from typing import Any

from pipeline.model import Chunk, Skipped

_CHUNK_FIELDS = tuple(Chunk.__dataclass_fields__)


def chunk_record(chunk: Chunk) -> dict[str, Any]:
    """Every field of a chunk; tuples become lists and enums their values."""
    record: dict[str, Any] = {}
    for name in _CHUNK_FIELDS:
        value = getattr(chunk, name)
        record[name] = list(value) if isinstance(value, tuple) else value
    record["symbol_type"] = chunk.symbol_type.value
    return record


def skipped_record(skipped: Skipped) -> dict[str, Any]:
    """A skipped file or span, tagged so a reader of mixed output can tell it from a chunk."""
    return {
        "skipped": True,
        "file_path": skipped.file_path,
        "reason": skipped.reason.value,
        "detail": skipped.detail,
        "line_start": skipped.line_start,
        "line_end": skipped.line_end,
    }
