"""Drafts are chunks before their code, embedding text, hash and id are derived; `finish` does that."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pipeline._values import value
from pipeline.calls import FileCalls
from pipeline.model import Chunk, ChunkerConfig, SourceContext, SymbolType
from pipeline.render import chunk_id_in, content_hash, embedding_text
from pipeline.splitting import LineSpan
from pipeline.types import Imports


@value
class FileUnit:
    """One parsed file and what every chunk of it shares."""

    def between(self, start: int, end: int) -> str:
        """Source text between two byte offsets."""
        return self.data[start:end].decode("utf-8", "replace")

    context: SourceContext
    file_path: str
    package: str
    imports: Imports
    data: bytes  # the UTF-8 source; slicing it is cheaper than Node.text for large nodes
    lines: list[str]
    calls: FileCalls
    config: ChunkerConfig
    id_prefix: bytes  # render.chunk_id_prefix of the file, computed once


@value
class Draft:
    """Metadata of a chunk-to-be; `key` identifies the symbol within its file (overloads included)."""

    key: str
    symbol_type: SymbolType
    name: str
    qualified_name: str
    enclosing_type: str | None
    signature: str
    rows: LineSpan
    parameter_types: tuple[str, ...] = ()
    modifiers: tuple[str, ...] = ()
    annotations: tuple[str, ...] = ()
    annotation_names: tuple[str, ...] = ()
    stereotype: str | None = None
    http_method: tuple[str, ...] = ()
    http_path: tuple[str, ...] = ()
    extends: tuple[str, ...] = ()
    implements: tuple[str, ...] = ()
    injects: tuple[str, ...] = ()
    javadoc_summary: str | None = None
    has_error: bool = False
    code: str | None = None  # set for type skeletons; otherwise the source lines on `rows`
    parts: tuple[Part, ...] = ()  # a method's parts (one when it fits); none for a type, which makes no calls


class Part(NamedTuple):
    """One piece of a split method: its rows and the calls made on them (a named tuple: one per method)."""

    rows: LineSpan
    calls: tuple[str, ...]
    calls_fq: tuple[str, ...]


def finish(unit: FileUnit, drafts: Sequence[Draft]) -> tuple[Chunk, ...]:
    """Turn drafts into chunks: code, embedding text, content hash and a stable, unique id."""
    seen: dict[str, int] = {}
    chunks: list[Chunk] = []
    append = chunks.append
    for draft in drafts:
        key = draft.key
        seen[key] = count = seen.get(key, 0) + 1
        if count > 1:  # two local classes of one name in one file would share a key: the ordinal keeps ids apart
            key = f"{key}#{count}"
        parts = draft.parts
        if not parts:
            append(_chunk(unit, draft, key, draft.rows, (), (), 0, 1))
        elif len(parts) == 1:  # most methods: no generator
            append(_chunk(unit, draft, key, *parts[0], 0, 1))
        else:
            chunks.extend(_chunk(unit, draft, key, *part, index, len(parts)) for index, part in enumerate(parts))
    return tuple(chunks)


def _resolve_all(imports: Imports, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(fq for name in names if (fq := imports.resolve(name)) is not None)


def _chunk(
    unit: FileUnit,
    draft: Draft,
    key: str,
    rows: LineSpan,
    calls: tuple[str, ...],
    calls_fq: tuple[str, ...],
    part_index: int,
    part_count: int,
) -> Chunk:
    code = draft.code if draft.code is not None else "\n".join(unit.lines[rows.first : rows.last + 1])
    symbol_type = SymbolType.METHOD_PART if part_count > 1 else draft.symbol_type
    ctx = unit.context
    imports = unit.imports
    extends, implements, injects = draft.extends, draft.implements, draft.injects
    chunk = Chunk(
        id=chunk_id_in(unit.id_prefix, key, part_index),
        repo_path=ctx.repo_path,
        gitlab_project_id=ctx.gitlab_project_id,
        commit_sha=ctx.commit_sha,
        branch=ctx.branch,
        file_path=unit.file_path,
        package=unit.package,
        qualified_name=draft.qualified_name,
        symbol_type=symbol_type,
        name=draft.name,
        signature=draft.signature,
        enclosing_type=draft.enclosing_type,
        parameter_types=draft.parameter_types,
        modifiers=draft.modifiers,
        annotations=draft.annotations,
        annotation_names=draft.annotation_names,
        stereotype=draft.stereotype,
        http_method=draft.http_method,
        http_path=draft.http_path,
        extends=extends,
        implements=implements,
        calls=calls,
        injects=injects,
        extends_fq=_resolve_all(imports, extends) if extends else (),
        implements_fq=_resolve_all(imports, implements) if implements else (),
        calls_fq=calls_fq,
        injects_fq=_resolve_all(imports, injects) if injects else (),
        javadoc_summary=draft.javadoc_summary,
        line_start=rows.first + 1,
        line_end=rows.last + 1,
        part_index=part_index,
        part_count=part_count,
        content_hash="",  # derived from the text, which is derived from the chunk's own fields
        parse_errors=draft.has_error,
        code=code,
        text="",
    )
    text = embedding_text(chunk)
    _derive(chunk, "text", text)
    _derive(chunk, "content_hash", content_hash(text))
    return chunk


_derive = object.__setattr__
"""Sets a field derived from the chunk's other fields, once, before the chunk leaves `finish` (immutable after)."""
