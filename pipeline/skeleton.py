"""The type chunk: declaration, annotations, javadoc, fields, constants and member signatures, bodies elided.

It answers "what is this class" in one chunk, and it is the only home of what has no body:
interface and abstract methods (Spring Data query methods, Feign endpoints), fields and
annotation elements.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from pipeline.declarations import TypeInfo
from pipeline.drafts import Draft, FileUnit
from pipeline.javadoc import javadoc_of, summarize
from pipeline.members import Member, body_members
from pipeline.splitting import LineSpan
from pipeline.spring import lombok_constructor_fields
from pipeline.syntax import slice_text, squash

_ELIDED = " { ... }"
_MAX_MEMBER_CHARS = 240
_INDENT = "    "
_KIND_WORDS = {
    "class": "class",
    "interface": "interface",
    "enum": "enum",
    "record": "record",
    "annotation": "@interface",
}


def type_chunk(unit: FileUnit, info: TypeInfo, outer: TypeInfo | None, members: list[Member]) -> Draft:
    """The draft of a type's own chunk."""
    node = info.node
    doc = javadoc_of(node)
    qualified = f"{unit.package}.{info.nested_name}" if unit.package else info.nested_name
    http_method, http_path = _bodiless_routes(members)
    javadoc = slice_text(unit.data, doc)
    return Draft(
        key=f"type:{info.nested_name}",
        symbol_type=info.kind,
        name=info.name,
        qualified_name=qualified,
        enclosing_type=qualified.rsplit(".", 1)[0] if outer is not None else None,
        signature=_declaration_line(unit, info),
        rows=LineSpan(doc.start_point.row if doc is not None else node.start_point.row, node.end_point.row),
        modifiers=info.modifiers.keywords,
        annotations=tuple(a.text for a in info.modifiers.annotations),
        annotation_names=tuple(a.name for a in info.modifiers.annotations),
        stereotype=info.stereotype,
        http_method=http_method,
        http_path=http_path,
        extends=info.extends,
        implements=info.implements,
        injects=_type_injections(info, members),
        javadoc_summary=summarize(javadoc) if doc is not None else None,
        has_error=_skeleton_has_error(info),
        code=_render(unit, info, javadoc),
    )


def _skeleton_has_error(info: TypeInfo) -> bool:
    """Whether what the type chunk shows (declaration, fields, signatures) holds an error.

    An error inside a method body is elided from the skeleton and flagged on that method's chunk.
    """
    node, body = info.node, info.body
    if not node.has_error:
        return False
    if any(child.has_error for child in node.children if body is None or child.id != body.id):
        return True
    for member in _members(info):
        if not member.has_error:
            continue
        member_body = member.child_by_field_name("body")
        if member_body is None or not member_body.has_error:
            return True
        if any(c.has_error for c in member.children if c.id != member_body.id):
            return True
    return False


def _declaration_line(unit: FileUnit, info: TypeInfo) -> str:
    """`public class OwnerController extends Base implements Api`: keywords, no annotations, no body."""
    node, body = info.node, info.body
    end = body.start_byte if body is not None else node.end_byte
    mods = node.named_child(0)
    start = mods.end_byte if mods is not None and mods.type == "modifiers" else node.start_byte
    return squash(" ".join([*info.modifiers.keywords, unit.between(start, end)]))


def _bodiless_routes(members: list[Member]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # Feign and other interface endpoints have no method chunk, so the type chunk carries their routes.
    methods: dict[str, None] = {}
    paths: dict[str, None] = {}
    for member in members:
        if member.body is None:
            methods.update(dict.fromkeys(member.http_method))
            paths.update(dict.fromkeys(member.http_path))
    return tuple(methods), tuple(paths)


def _type_injections(info: TypeInfo, members: list[Member]) -> tuple[str, ...]:
    injects: dict[str, None] = {}
    for member in members:
        injects.update(dict.fromkeys(member.injects))
    for field in info.fields:
        if field.modifiers.has("Autowired", "Inject", "Resource"):
            injects[field.injected_type] = None
    if info.is_bean and not any(m.is_constructor for m in members):
        picked = lombok_constructor_fields(info.modifiers, [(f.modifiers, f.has_initializer) for f in info.fields])
        injects.update(dict.fromkeys(info.fields[i].injected_type for i in picked))
    return tuple(t for t in injects if t)


def _members(info: TypeInfo) -> Iterator[Node]:
    return body_members(info.body) if info.body is not None else iter(())


def _render(unit: FileUnit, info: TypeInfo, javadoc: str) -> str:
    node, body = info.node, info.body
    head_end = body.start_byte if body is not None else node.end_byte
    head = "\n".join(line.strip() for line in unit.between(node.start_byte, head_end).strip().splitlines())
    lines = [javadoc.strip()] if javadoc else []
    lines.append(head + " {")
    lines.extend(_INDENT + line for line in _member_lines(unit, info))
    lines.append("}")
    return "\n".join(lines)


def _member_lines(unit: FileUnit, info: TypeInfo) -> Iterator[str]:
    constants: list[str] = []
    for member in _members(info):
        kind = member.type
        if kind == "enum_constant":
            constants.append(_elide(unit, member, member.child_by_field_name("body")))
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


def _member_line(unit: FileUnit, member: Node, kind: str) -> str | None:
    if kind in ("field_declaration", "constant_declaration"):
        return _shorten(squash(slice_text(unit.data, member)))
    if kind == "static_initializer":
        return "static" + _ELIDED
    if kind in ("method_declaration", "constructor_declaration", "compact_constructor_declaration"):
        body = member.child_by_field_name("body")
        if body is not None:
            return _elide(unit, member, body)
        doc = javadoc_of(member)
        summary = summarize(slice_text(unit.data, doc)) if doc is not None else None
        line = squash(slice_text(unit.data, member))
        return f"/** {summary} */ {line}" if summary else line
    if kind in ("annotation_type_element_declaration",):
        return squash(slice_text(unit.data, member))
    if kind in (
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    ):
        return _elide(unit, member, member.child_by_field_name("body"))
    return None  # blocks, ERROR nodes


def _elide(unit: FileUnit, member: Node, body: Node | None) -> str:
    if body is None:
        return squash(slice_text(unit.data, member))
    return squash(unit.between(member.start_byte, body.start_byte)) + _ELIDED


def _shorten(line: str) -> str:
    if len(line) <= _MAX_MEMBER_CHARS:
        return line
    head, eq, _ = line.partition("=")
    return f"{head.rstrip()} = …;" if eq else line[: _MAX_MEMBER_CHARS - 1] + "…"
