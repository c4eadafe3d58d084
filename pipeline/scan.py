"""Calls, method references and local declarations of a file, found by one tree-sitter query (the Python reader).

A query is executed in C, but each execution walks the whole tree; measured on java.base, three
separate queries cost three walks (~0.25 s each per 800 files) where one combined query costs one.
So types, invocations, method references and variable declarations are gathered together here, and
each receiver is taken apart into a `Call` (see `pipeline.outline`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from tree_sitter import Node, QueryCursor

from pipeline.outline import TYPE_NODE_KINDS, Call, LocalDecl, Receiver
from pipeline.syntax import query, slice_text, squash, text
from pipeline.types import simple_type

_SCAN = query(
    " ".join(f"({kind}) @type" for kind in TYPE_NODE_KINDS)
    + """
    (method_invocation object: (_)? @object name: (identifier) @name)
    (method_reference) @ref
    (local_variable_declaration type: (_) @vtype declarator: (variable_declarator name: (identifier) @vname))
    (formal_parameter type: (_) @vtype name: (identifier) @vname)
    (catch_formal_parameter (catch_type . (_) @vtype) name: (identifier) @vname)
    (enhanced_for_statement type: (_) @vtype name: (identifier) @vname)
    (resource type: (_) @vtype name: (identifier) @vname)
    (instanceof_expression right: (_) @vtype name: (identifier) @vname)
    (type_pattern (_) @vtype (identifier) @vname)
    """
)

_CALL = len(TYPE_NODE_KINDS)  # pattern indexes: the types, then calls, references, variables
_REFERENCE = _CALL + 1
_by_row = attrgetter("row")


@dataclass(slots=True)
class Scan:
    """What the query found: type declaration nodes, calls and local declarations, each in document order."""

    types: list[Node] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    decls: list[LocalDecl] = field(default_factory=list)


def scan(root: Node, data: bytes) -> Scan:
    """Run the combined query once over a file parsed from `data`."""
    found = Scan()
    calls, decls, references = found.calls, found.decls, []
    # Dispatch on the pattern's index, not on capture names: 270,000 matches on java.base.
    for pattern, caps in QueryCursor(_SCAN).matches(root):
        if pattern == _CALL:
            receiver = caps.get("object")
            name = caps["name"][0]
            # The name's row, not the call's: in a chain split over lines, `.save(x)` sits on its own line.
            calls.append(_call(data, name.start_point.row, slice_text(data, name), receiver[0] if receiver else None))
        elif pattern > _REFERENCE:
            name = caps["vname"][0]
            decls.append(
                LocalDecl(row=name.start_point.row, name=slice_text(data, name), type=_declared(caps["vtype"][0]))
            )
        elif pattern == _REFERENCE:
            references.append(caps["ref"][0])
        else:
            found.types.append(caps["type"][0])
    for ref in references:
        children = ref.children
        if len(children) >= 3:
            calls.append(_call(data, children[-1].start_point.row, slice_text(data, children[-1]), children[0]))
    calls.sort(key=_by_row)
    decls.sort(key=_by_row)
    return found


def _declared(type_node: Node) -> str:
    type_name = simple_type(type_node)
    if type_name != "var":
        return type_name
    # `var x = new Foo<>()` is the only initializer whose type the file states outright.
    parent = type_node.parent
    if parent is not None and parent.type == "resource":  # try (var in = new FileInputStream(f))
        value = parent.child_by_field_name("value")
    else:
        declarator = type_node.next_named_sibling
        value = declarator.child_by_field_name("value") if declarator is not None else None
    if value is not None and value.type == "object_creation_expression":
        return simple_type(value.child_by_field_name("type"))
    return ""


def _call(data: bytes, row: int, name: str, node: Node | None) -> Call:
    if node is None:
        return Call(
            row=row, name=name, receiver=Receiver.NONE, text="", root=Receiver.NONE, root_text="", alt="", links=()
        )
    if node.type == "identifier":  # `repo.save(x)`, two receivers in three
        ident = slice_text(data, node)
        return Call(
            row=row, name=name, receiver=Receiver.IDENTIFIER, text=ident, root=Receiver.IDENTIFIER, root_text=ident,
            alt="", links=(),
        )  # fmt: skip
    dotted = _dotted(data, node)
    segments: list[str] = []
    while node.type in _CHAIN_LINKS:
        if node.type == "method_invocation":
            segments.append(text(node.child_by_field_name("name")) + "()")
        elif _is_this_field(node):
            break
        else:
            segments.append(text(node.child_by_field_name("field")))
        inner = node.child_by_field_name("object")
        if inner is None:
            return Call(
                row=row, name=name, receiver=Receiver.CHAIN, text="", root=Receiver.ORPHAN, root_text="", alt="",
                links=tuple(reversed(segments)),
            )  # fmt: skip
        node = inner
    root, root_text, alt = _root(data, node)
    return Call(
        row=row, name=name, receiver=Receiver.DOTTED if dotted is not None else Receiver.CHAIN, text=dotted or "",
        root=root, root_text=root_text, alt=alt, links=tuple(reversed(segments)),
    )  # fmt: skip


_CHAIN_LINKS = frozenset({"method_invocation", "field_access"})
_LITERAL_TYPES = {"string_literal": "String", "text_block": "String", "character_literal": "char"}
_TYPE_USE_KINDS = frozenset({"type_identifier", "scoped_type_identifier", "generic_type", "array_type"})


def _dotted(data: bytes, node: Node) -> str | None:
    """`a.b.C` for a chain of field accesses on an identifier, else None."""
    names: list[str] = []
    while node.type == "field_access":
        field_node = node.child_by_field_name("field")
        inner = node.child_by_field_name("object")
        if field_node is None or inner is None:
            return None
        names.append(slice_text(data, field_node))
        node = inner
    if node.type != "identifier" or not names:
        return None
    names.append(slice_text(data, node))
    return ".".join(reversed(names))


def _is_this_field(node: Node) -> bool:
    obj = node.child_by_field_name("object")
    return node.type == "field_access" and obj is not None and obj.type == "this"


def _root(data: bytes, node: Node) -> tuple[int, str, str]:
    """The start of a receiver expression: (kind, text, alternative text)."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]  # a loop, not recursion: `((((x))))` may nest a thousand deep
    kind = node.type
    if kind == "identifier":
        return Receiver.IDENTIFIER, slice_text(data, node), ""
    if kind == "this":
        return Receiver.THIS, "", ""
    if kind == "super":
        return Receiver.SUPER, "", ""
    if kind == "field_access":  # this.field
        return Receiver.FIELD, text(node.child_by_field_name("field")), squash(text(node))
    if kind in ("object_creation_expression", "cast_expression"):
        return Receiver.TYPED, simple_type(node.child_by_field_name("type")), ""
    if kind in _LITERAL_TYPES:
        return Receiver.TYPED, _LITERAL_TYPES[kind], ""
    if kind in _TYPE_USE_KINDS:
        return Receiver.TYPED, simple_type(node), ""
    return Receiver.OTHER, squash(text(node)), ""
