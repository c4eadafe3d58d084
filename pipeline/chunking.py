"""From one Java file to its chunks: a type skeleton per type, a chunk per method and constructor.

`chunk_source` is the pipeline's entry point: bytes in, a `FileResult` out, never an exception for
bad input. Lambdas and anonymous classes stay inside their enclosing method; methods of nested,
inner, local and enum-constant classes get chunks of their own named `Outer.Inner.method`.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from pipeline.calls import CallScope, FileCalls
from pipeline.declarations import TYPE_KINDS, TypeInfo, declared_types, find_types, package_of
from pipeline.drafts import Draft, FileUnit, Part, finish
from pipeline.javadoc import javadoc_of, summarize
from pipeline.members import Member, read_members
from pipeline.model import ChunkerConfig, FileResult, Skipped, SkipReason, SourceContext, SymbolType
from pipeline.scan import scan
from pipeline.skeleton import type_chunk
from pipeline.source import decode_source
from pipeline.splitting import LineSpan, estimate_tokens, split_rows
from pipeline.syntax import parse, slice_text, text
from pipeline.types import read_imports

_NO_METHOD_FILES = ("package-info.java", "module-info.java")
# Lombok's logger annotations and the type of the `log` field each generates (Lombok docs, @Log).
_LOMBOK_LOGGERS = {
    "Slf4j": ("Logger", "org.slf4j.Logger"),
    "XSlf4j": ("XLogger", "org.slf4j.ext.XLogger"),
    "Log4j": ("Logger", "org.apache.log4j.Logger"),
    "Log4j2": ("Logger", "org.apache.logging.log4j.Logger"),
    "CommonsLog": ("Log", "org.apache.commons.logging.Log"),
    "Log": ("Logger", "java.util.logging.Logger"),
    "JBossLog": ("Logger", "org.jboss.logging.Logger"),
    "Flogger": ("FluentLogger", "com.google.common.flogger.FluentLogger"),
}


def chunk_source(raw: bytes, file_path: str, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """Chunk one Java file. Bad input comes back as `Skipped` entries, never as an exception."""
    decoded = decode_source(raw, file_path, config)
    if isinstance(decoded, Skipped):
        return FileResult(file_path=file_path, skipped=(decoded,))
    root = parse(decoded.data).root_node
    package = package_of(root)
    found = scan(root)
    types = list(find_types(found.types, decoded.data))
    unit = FileUnit(
        context=context,
        file_path=file_path,
        package=package,
        imports=read_imports(root, declared_types(types, package), package),
        data=decoded.data,
        lines=decoded.data.decode("utf-8").split("\n"),
        calls=FileCalls(found, decoded.data),
        config=config,
    )
    with_methods = not file_path.endswith(_NO_METHOD_FILES)
    drafts: list[Draft] = []
    enclosing = {info.node.id: info for info in types}
    for info in types:
        members = read_members(info, unit.data)
        drafts.append(type_chunk(unit, info, _outer(info, enclosing), members))
        if with_methods:
            drafts.extend(_member_drafts(unit, info, members, _scope(unit, info, enclosing)))
    return FileResult(
        file_path=file_path,
        chunks=finish(unit, drafts),
        skipped=tuple(_syntax_gaps(root, types, file_path)),
        encoding=decoded.encoding,
        parse_errors=root.has_error,
    )


def _outer(info: TypeInfo, enclosing: dict[int, TypeInfo]) -> TypeInfo | None:
    parent = info.node.parent
    while parent is not None:
        if parent.type in TYPE_KINDS:
            return enclosing.get(parent.id)
        parent = parent.parent
    return None


def _scope(unit: FileUnit, info: TypeInfo, enclosing: dict[int, TypeInfo]) -> CallScope:
    # An inner class sees the fields of its enclosing classes; its own fields shadow theirs.
    chain = [info]
    while (outer := _outer(chain[-1], enclosing)) is not None:
        chain.append(outer)
    fields: dict[str, str] = {}
    known_fq: dict[str, str] = {}
    for each in reversed(chain):
        logger = next((_LOMBOK_LOGGERS[a.name] for a in each.modifiers.annotations if a.name in _LOMBOK_LOGGERS), None)
        if logger is not None:  # the `log` field Lombok generates
            fields["log"], known_fq[logger[0]] = logger
        fields.update(each.field_types)
    superclass = info.extends[0] if info.extends and info.kind is SymbolType.CLASS else None
    return CallScope(type_name=info.name, superclass=superclass, fields=fields, imports=unit.imports, known_fq=known_fq)


def _member_drafts(unit: FileUnit, info: TypeInfo, members: list[Member], scope: CallScope) -> Iterator[Draft]:
    for member in members:
        if member.body is not None:
            yield _callable_draft(unit, info, member, scope)


def _callable_draft(unit: FileUnit, info: TypeInfo, member: Member, scope: CallScope) -> Draft:
    node = member.node
    doc = javadoc_of(node)
    rows = LineSpan(doc.start_point.row if doc is not None else node.start_point.row, node.end_point.row)
    owner = f"{unit.package}.{member.owner}" if unit.package else member.owner
    sig = member.signature
    annotations = member.modifiers.annotations
    return Draft(
        key=f"{member.owner}.{member.name}({','.join(sig.parameter_types)})",
        symbol_type=SymbolType.CONSTRUCTOR if member.is_constructor else SymbolType.METHOD,
        name=member.name,
        qualified_name=f"{owner}.{member.name}",
        enclosing_type=owner,
        signature=sig.text,
        rows=rows,
        parameter_types=sig.parameter_types,
        modifiers=member.modifiers.keywords,
        annotations=tuple(a.text for a in annotations),
        annotation_names=tuple(a.name for a in annotations),
        stereotype=info.stereotype,
        http_method=member.http_method,
        http_path=member.http_path,
        injects=member.injects,
        javadoc_summary=summarize(slice_text(unit.data, doc)) if doc is not None else None,
        has_error=node.has_error,
        parts=tuple(
            Part(span, *unit.calls.calls_in((span.first, span.last), (rows.first, rows.last), scope))
            for span in _part_rows(unit, rows, member.body, node.end_byte - (doc or node).start_byte)
        ),
    )


def _part_rows(unit: FileUnit, rows: LineSpan, body: Node | None, size: int) -> list[LineSpan]:
    """Rows of each part: one part when the method fits the budget, else the splitter's parts."""
    budget = unit.config.max_chunk_tokens
    # `size` bytes can never hold more than size/3 estimated tokens: most methods stop here.
    if body is None or (size + 2) // 3 <= budget:
        return [rows]
    if estimate_tokens("\n".join(unit.lines[rows.first : rows.last + 1])) <= budget:
        return [rows]
    return split_rows(rows, body, unit.lines, budget)


def _syntax_gaps(root: Node, types: list[TypeInfo], file_path: str) -> Iterator[Skipped]:
    """Code that tree-sitter could not place in any declaration: it is in no chunk, so say so."""
    if root.has_error and not types:
        yield Skipped(
            file_path=file_path,
            reason=SkipReason.SYNTAX_ERROR,
            detail="no type declaration could be parsed",
            line_start=1,
            line_end=root.end_point.row + 1,
        )
        return
    containers = [root, *(info.body for info in types if info.body is not None)]
    for container in containers:
        if not container.has_error:
            continue
        for child in container.named_children:
            if child.type == "ERROR":
                snippet = " ".join(text(child).split())[:60]
                yield Skipped(
                    file_path=file_path,
                    reason=SkipReason.SYNTAX_ERROR,
                    detail=f"unparsable code: {snippet}",
                    line_start=child.start_point.row + 1,
                    line_end=child.end_point.row + 1,
                )
