"""The type chunk: declaration, annotations, javadoc, fields, constants and member signatures, bodies elided.

It answers "what is this class" in one chunk, and it is the only home of fields and constants.
Bodiless methods (interface and abstract methods, Spring Data query methods, Feign endpoints,
annotation elements) are listed here and have chunks of their own too, which carry their routes.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.declarations import TypeInfo
from pipeline.drafts import Draft, FileUnit
from pipeline.javadoc import summarize
from pipeline.members import Member
from pipeline.model import SymbolType
from pipeline.outline import CALLABLE_NODE_KINDS, TYPE_NODE_KINDS, MemberDecl
from pipeline.splitting import LineSpan
from pipeline.spring import injected_type, lombok_constructor_fields, maps_http
from pipeline.syntax import squash

_ELIDED = " { ... }"
_MAX_MEMBER_CHARS = 240
_INDENT = "    "


def type_chunk(unit: FileUnit, info: TypeInfo, outer: TypeInfo | None, members: list[Member]) -> Draft:
    """The draft of a type's own chunk."""
    decl = info.decl
    qualified = unit.qualified(info.nested_name)
    javadoc = unit.between(decl.doc_start, decl.doc_end) if decl.doc_start >= 0 else ""
    annotations = info.modifiers.annotations
    injects = _type_injections(info, members)
    if_bean = _injections_if_bean(info, members)
    rows = LineSpan(decl.doc_row if decl.doc_start >= 0 else decl.start_row, decl.end_row)
    chunk = unit.blank_chunk()  # cheaper than `Chunk(...)` with 30 keywords (`pipeline._values.blank`)
    chunk.qualified_name = qualified
    chunk.symbol_type = info.kind
    chunk.name = info.name
    chunk.signature = _declaration_line(unit, info)
    chunk.enclosing_type = qualified.rsplit(".", 1)[0] if outer is not None else None
    chunk.modifiers = info.modifiers.keywords
    chunk.annotations = tuple(a.text for a in annotations) if annotations else ()
    chunk.annotation_names = tuple(a.name for a in annotations) if annotations else ()
    chunk.stereotype = info.stereotype
    chunk.maps_http = maps_http(info.modifiers) if info.kind is SymbolType.ANNOTATION and annotations else ()
    chunk.extends = info.extends
    chunk.implements = info.implements
    chunk.injects = injects
    chunk.extends_fq = unit.resolve_all(info.extends)
    chunk.implements_fq = unit.resolve_all(info.implements)
    chunk.injects_fq = unit.resolve_all(injects)
    chunk.injects_if_bean = if_bean
    chunk.injects_if_bean_fq = unit.resolve_all(if_bean)
    chunk.javadoc_summary = summarize(javadoc) if decl.doc_start >= 0 else None
    chunk.line_start = rows.first + 1
    chunk.line_end = rows.last + 1
    chunk.parse_errors = decl.has_error and (decl.head_error or any(m.outside_error for m in decl.members))
    chunk.code = _render(unit, info, javadoc)
    return Draft(f"type:{info.nested_name}", chunk)


def _declaration_line(unit: FileUnit, info: TypeInfo) -> str:
    """`public class OwnerController extends Base implements Api`: keywords, no annotations, no body."""
    decl = info.decl
    end = decl.body_start if decl.body_start >= 0 else decl.end
    return squash(" ".join([*info.modifiers.keywords, unit.between(decl.head_start, end)]))


def _type_injections(info: TypeInfo, members: list[Member]) -> tuple[str, ...]:
    injects: dict[str, None] = {}
    for member in members:
        injects.update(dict.fromkeys(member.injects))
    for field in info.fields:
        if field.modifiers.has("Autowired", "Inject", "Resource"):
            injects[injected_type(field.type, field.type_arg)] = None
    if info.is_bean:
        injects.update(dict.fromkeys(_lombok_injections(info, members)))
    return tuple(t for t in injects if t)


def _injections_if_bean(info: TypeInfo, members: list[Member]) -> tuple[str, ...]:
    """What the type would inject through its constructor (its own or Lombok's) if it were a bean."""
    if not info.may_be_bean:
        return ()
    injects = dict.fromkeys(t for m in members for t in m.injects_if_bean)
    injects.update(dict.fromkeys(_lombok_injections(info, members)))
    return tuple(t for t in injects if t)


def _lombok_injections(info: TypeInfo, members: list[Member]) -> list[str]:
    """The types Lombok's generated constructor receives, when the type declares no constructor."""
    if any(m.is_constructor for m in members):
        return []
    picked = lombok_constructor_fields(info.modifiers, [(f.modifiers, f.has_initializer) for f in info.fields])
    return [injected_type(info.fields[i].type, info.fields[i].type_arg) for i in picked]


def _render(unit: FileUnit, info: TypeInfo, javadoc: str) -> str:
    decl = info.decl
    head_end = decl.body_start if decl.body_start >= 0 else decl.end
    head = "\n".join(line.strip() for line in unit.between(decl.start, head_end).strip().splitlines())
    lines = [javadoc.strip()] if javadoc else []
    lines.append(head + " {")
    lines.extend(_INDENT + line for line in _member_lines(unit, decl.members))
    lines.append("}")
    return "\n".join(lines)


def _member_lines(unit: FileUnit, members: tuple[MemberDecl, ...]) -> Iterator[str]:
    constants: list[str] = []
    for member in members:
        kind = member.kind
        if kind == "enum_constant":
            constants.append(_elide(member))
            continue
        if constants:
            yield ", ".join(constants) + ";"
            constants = []
        if kind == "block_comment" or kind == "line_comment":
            continue  # as many as members in javadoc'd code, and never a line
        line = _member_line(unit, member, kind)
        if line:
            yield line
    if constants:
        yield ", ".join(constants) + ";"


def _member_line(unit: FileUnit, member: MemberDecl, kind: str) -> str | None:
    if kind == "field_declaration" or kind == "constant_declaration":
        return _shorten(member.head)
    if kind == "static_initializer":
        return "static" + _ELIDED
    if kind in CALLABLE_NODE_KINDS:
        if member.body_start >= 0:
            return member.head + _ELIDED
        summary = summarize(unit.between(member.doc_start, member.doc_end)) if member.doc_start >= 0 else None
        return f"/** {summary} */ {member.head}" if summary else member.head
    if kind == "annotation_type_element_declaration":
        return member.head
    if kind in TYPE_NODE_KINDS:
        return _elide(member)
    return None  # blocks, ERROR nodes


def _elide(member: MemberDecl) -> str:
    return member.head + _ELIDED if member.body_start >= 0 else member.head


def _shorten(line: str) -> str:
    if len(line) <= _MAX_MEMBER_CHARS:
        return line
    head, eq, _ = line.partition("=")
    return f"{head.rstrip()} = …;" if eq else line[: _MAX_MEMBER_CHARS - 1] + "…"
