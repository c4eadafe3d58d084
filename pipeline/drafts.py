"""Drafts are chunks before their id, embedding text and content hash are derived; `finish` derives them.

A draft holds the chunk itself (`pipeline.model.Chunk`, the one declaration of its fields) with every
field but those three, its key in the file, and the parts of a split method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from tree_sitter import Node

from pipeline._values import blank, value
from pipeline.calls import FileCalls
from pipeline.field_values import FieldValues
from pipeline.model import TYPE_SYMBOLS, Chunk, ChunkerConfig, SourceContext, SymbolType
from pipeline.render import chunk_id_in, content_hash, embedding_text
from pipeline.scope import is_test
from pipeline.splitting import LineSpan
from pipeline.types import Imports


@value
class FileUnit:
    """One parsed file and what every chunk of it shares."""

    def between(self, start: int, end: int) -> str:
        """Source text between two byte offsets."""
        return self.data[start:end].decode("utf-8", "replace")

    def code(self, rows: LineSpan) -> str:
        """The source lines on `rows`."""
        return "\n".join(self.lines[rows.first : rows.last + 1])

    def blank_chunk(self) -> Any:
        """A `Chunk` of this file with its file's fields and every default set, the rest to be set by attribute.

        What `Chunk(...)` with 37 keywords does at a fifteenth of its cost (`pipeline._values.blank`); `id`,
        `content_hash` and `text` are left empty for `finish`.
        """
        chunk = _BLANK_CHUNK()
        ctx = self.context
        chunk.id = chunk.content_hash = chunk.text = ""
        chunk.repo_path = ctx.repo_path
        chunk.gitlab_project_id = ctx.gitlab_project_id
        chunk.commit_sha = ctx.commit_sha
        chunk.branch = ctx.branch
        chunk.library = ctx.library
        chunk.test = is_test(self.file_path, self.config)
        chunk.file_path = self.file_path
        chunk.package = self.package
        return chunk

    def qualified(self, nested: str) -> str:
        """A name within the file (`Outer.Inner`, a facade `FileKt`) qualified by its package, if it has one."""
        return f"{self.package}.{nested}" if self.package else nested

    def resolve_all(self, names: Sequence[str]) -> tuple[str, ...]:
        """The fully qualified names the file makes knowable for these type names."""
        if not names:
            return ()
        resolve = self.imports.resolve
        return tuple(fq for name in names if (fq := resolve(name)) is not None)

    context: SourceContext
    file_path: str
    package: str
    imports: Imports
    data: bytes  # the UTF-8 source; slicing it is cheaper than Node.text for large nodes
    lines: list[str]
    calls: FileCalls
    config: ChunkerConfig
    id_prefix: bytes  # render.chunk_id_prefix of the file, computed once
    constants: Callable[[], Mapping[str, Node]]  # `http_calls.file_constants`, read once if asked
    field_values: Callable[[], Mapping[int, FieldValues]]  # `field_values.file_field_values`, likewise
    http_clients: Callable[
        [], bool
    ]  # the source names an HTTP client (`http_calls.mentions_clients`), read once if asked


class Part(NamedTuple):
    """One piece of a split method: its rows and the calls made on them."""

    rows: LineSpan
    calls: tuple[str, ...]
    calls_fq: tuple[str, ...]
    outbound: tuple[str, ...] = ()  # the HTTP calls made on them (`pipeline.outbound`)
    # The routes declared on them (a Kotlin router's, `pipeline.kotlin.routes`); None: the whole method's.
    http_method: tuple[str, ...] | None = None
    http_path: tuple[str, ...] | None = None


class Draft(NamedTuple):
    """A chunk but for its id, text and hash; `key` identifies the symbol within its file (overloads included)."""

    key: str
    chunk: Chunk  # a split method's: the whole method, which each part copies with its rows and calls
    parts: tuple[Part, ...] = ()  # a split method's parts (two or more); otherwise the chunk is the only one


def finish(unit: FileUnit, drafts: Sequence[Draft]) -> tuple[Chunk, ...]:
    """Turn drafts into chunks: a stable, unique id, the embedding text and its content hash.

    A member's text also carries the Javadoc summary of its type (`render.embedding_text`), found
    among the file's type drafts by the member's `enclosing_type`.
    """
    seen: dict[str, int] = {}
    chunks: list[Chunk] = []
    prefix = unit.id_prefix
    type_summaries = {
        d.chunk.qualified_name: d.chunk.javadoc_summary for d in drafts if d.chunk.symbol_type in TYPE_SYMBOLS
    }
    for key, chunk, parts in drafts:
        type_summary = type_summaries.get(chunk.enclosing_type or "") if chunk.symbol_type not in TYPE_SYMBOLS else None
        seen[key] = count = seen.get(key, 0) + 1
        if count > 1:  # two local classes of one name in one file would share a key: the ordinal keeps ids apart
            key = f"{key}#{count}"
        if not parts:
            chunks.append(_derived(chunk, prefix, key, type_summary))
            continue
        for index, (rows, calls, calls_fq, outbound, verbs, paths) in enumerate(parts):
            part = replace(
                chunk, symbol_type=SymbolType.METHOD_PART, line_start=rows.first + 1, line_end=rows.last + 1,
                calls=calls, calls_fq=calls_fq, outbound=outbound, part_index=index, part_count=len(parts),
                code=unit.code(rows), http_method=chunk.http_method if verbs is None else verbs,
                http_path=chunk.http_path if paths is None else paths,
            )  # fmt: skip
            chunks.append(_derived(part, prefix, key, type_summary))
    return tuple(chunks)


def _derived(chunk: Chunk, id_prefix: bytes, key: str, type_summary: str | None) -> Chunk:
    """The chunk with its id, text and hash set: derived once from its fields and its type's summary."""
    text = embedding_text(chunk, type_summary)
    _set(chunk, "text", text)
    _set(chunk, "content_hash", content_hash(text))
    _set(chunk, "id", chunk_id_in(id_prefix, key, chunk.part_index))
    return chunk


_set = object.__setattr__
_BLANK_CHUNK = blank(Chunk)
