"""The Python reader of a file's outline, over py-tree-sitter's `Node` API (see `pipeline.outline`).

It is the fallback when the C reader (`pipeline._native`) is not built, and the reference it is
tested against: both give equal outlines for every tree.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node, Tree

from pipeline.annotations import read_modifiers
from pipeline.outline import (
    CALLABLE_NODE_KINDS,
    ELEMENT_NODE_KIND,
    NO_MODIFIERS,
    TYPE_NODE_KINDS,
    Field,
    Import,
    MemberDecl,
    Outline,
    Param,
    TypeDecl,
)
from pipeline.scan import scan
from pipeline.syntax import slice_text, squash, text
from pipeline.types import simple_type

_NAMES = ("scoped_identifier", "identifier")
_PARAM_KINDS = ("formal_parameter", "spread_parameter")
_UNQUOTED = frozenset({"line_comment", "block_comment", "static_initializer"})  # skeletons show no text of these


def read_outline(tree: Tree, data: bytes) -> Outline:
    """The outline of a tree parsed from `data`."""
    root = tree.root_node
    found = scan(root, data)
    types: list[TypeDecl] = []
    index: dict[int, int] = {}
    for node in found.types:
        name = slice_text(data, node.child_by_field_name("name"))
        if name:
            index[node.id] = len(types)
            types.append(_type_decl(node, name, data, index))
    return Outline(
        package=_package(root),
        imports=tuple(_imports(root)),
        types=types,
        calls=found.calls,
        decls=found.decls,
        has_error=root.has_error,
    )


def _package(root: Node) -> str:
    for child in root.named_children:
        if child.type == "package_declaration":
            return text(next((c for c in child.named_children if c.type in _NAMES), None))
    return ""


def _imports(root: Node) -> Iterator[Import]:
    for child in root.named_children:
        if child.type != "import_declaration":
            continue
        names = [c for c in child.named_children if c.type in _NAMES]
        if names:
            kinds = [c.type for c in child.children]
            yield Import(name=text(names[0]), static="static" in kinds, wildcard="asterisk" in kinds)


def _type_decl(node: Node, name: str, data: bytes, index: dict[int, int]) -> TypeDecl:
    body = node.child_by_field_name("body")
    nested_name = ".".join([*_enclosing_names(node), name])
    mods = node.named_child(0)
    doc = _javadoc(node.prev_named_sibling)
    extends, implements = _supertypes(node)
    has_error = node.has_error
    record_params = _params(node.child_by_field_name("parameters"), data) if node.type == "record_declaration" else ()
    return TypeDecl(
        kind=node.type,
        name=name,
        nested_name=nested_name,
        outer=_outer(node, index),
        start=node.start_byte,
        end=node.end_byte,
        start_row=node.start_point.row,
        end_row=node.end_point.row,
        head_start=mods.end_byte if mods is not None and mods.type == "modifiers" else node.start_byte,
        body_start=body.start_byte if body is not None else -1,
        has_error=has_error,
        head_error=has_error and any(c.has_error for c in node.children if body is None or c.id != body.id),
        body_error=body is not None and body.has_error,
        doc_start=doc.start_byte if doc is not None else -1,
        doc_end=doc.end_byte if doc is not None else -1,
        doc_row=doc.start_point.row if doc is not None else -1,
        modifiers=read_modifiers(node, data),
        extends=extends,
        implements=implements,
        fields=(
            *(_record_field(p) for p in record_params if p[0].kind == "formal_parameter"),
            *(_fields(body, data) if body is not None else ()),
        ),
        members=tuple(_members(body, data, nested_name, record_params)) if body is not None else (),
    )


def _outer(node: Node, index: dict[int, int]) -> int:
    parent = node.parent
    while parent is not None:
        if parent.type in TYPE_NODE_KINDS:
            return index.get(parent.id, -1)
        parent = parent.parent
    return -1


def _enclosing_names(node: Node) -> list[str]:
    names: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in TYPE_NODE_KINDS or parent.type == "enum_constant":
            names.append(text(parent.child_by_field_name("name")))
        parent = parent.parent
    return names[::-1]


def _javadoc(prev: Node | None) -> Node | None:
    """The `/** ... */` comment among a declaration's previous named siblings, line comments skipped."""
    while prev is not None and prev.type == "line_comment":
        prev = prev.prev_named_sibling
    if prev is None or prev.type != "block_comment":
        return None
    raw = prev.text
    return prev if raw is not None and raw.startswith(b"/**") and raw != b"/**/" else None


def _supertypes(node: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    superclass = node.child_by_field_name("superclass")
    extends: tuple[str, ...] = ()
    if superclass is not None:
        extends = tuple(simple_type(c) for c in superclass.named_children)
    implements = _type_list(node.child_by_field_name("interfaces"))
    if node.type == "interface_declaration":
        extends = _type_list(next((c for c in node.named_children if c.type == "extends_interfaces"), None))
    return extends, implements


def _type_list(node: Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    found = next((c for c in node.named_children if c.type == "type_list"), None)
    return tuple(simple_type(c) for c in found.named_children) if found is not None else ()


def _type_arg(type_node: Node | None) -> str | None:
    """Simple name of the sole type argument of a generic type (what `List<Handler>` injects)."""
    if type_node is None or type_node.type != "generic_type":
        return None
    args = next((c for c in type_node.named_children if c.type == "type_arguments"), None)
    if args is None or args.named_child_count != 1:
        return None
    return simple_type(args.named_children[0])


def _fields(body: Node, data: bytes) -> Iterator[Field]:
    members = body.named_children
    if body.type == "enum_body":
        decls = next((c for c in members if c.type == "enum_body_declarations"), None)
        members = decls.named_children if decls is not None else []
    for member in members:
        if member.type not in ("field_declaration", "constant_declaration"):
            continue
        modifiers = read_modifiers(member, data)
        type_node = member.child_by_field_name("type")
        field_type, type_arg = simple_type(type_node), _type_arg(type_node)
        for declarator in member.children_by_field_name("declarator"):
            yield Field(
                name=slice_text(data, declarator.child_by_field_name("name")),
                type=field_type,
                type_arg=type_arg,
                modifiers=modifiers,
                has_initializer=declarator.child_by_field_name("value") is not None,
            )


def _record_field(param: tuple[Param, Node]) -> Field:
    # Record components are private final fields of the record (JLS 8.10.3).
    p = param[0]
    return Field(name=p.name, type=p.simple, type_arg=p.type_arg, modifiers=p.modifiers, has_initializer=False)


def _params(params: Node | None, data: bytes) -> tuple[tuple[Param, Node], ...]:
    """Formal and varargs parameters of a `formal_parameters` node, each with its node."""
    if params is None:
        return ()
    return tuple((_param(p, data), p) for p in params.named_children if p.type in _PARAM_KINDS)


def _param(node: Node, data: bytes) -> Param:
    type_node = node.child_by_field_name("type")
    if node.type == "spread_parameter":
        kinds = [c for c in node.named_children if c.type not in ("modifiers", "variable_declarator")]
        declarator = next((c for c in node.named_children if c.type == "variable_declarator"), None)
        name = text(declarator.child_by_field_name("name")) if declarator is not None else ""
        shown = (squash(text(kinds[0])) if kinds else "") + "..."
    else:
        shown = squash(slice_text(data, type_node))
        name = slice_text(data, node.child_by_field_name("name"))
    return Param(
        kind=node.type,
        type=shown,
        name=name,
        simple=simple_type(type_node),
        type_arg=_type_arg(type_node),
        modifiers=read_modifiers(node, data),
    )


def _members(
    body: Node, data: bytes, owner: str, record_params: tuple[tuple[Param, Node], ...]
) -> Iterator[MemberDecl]:
    """Named children of a body, enum body declarations flattened."""
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            for inner in child.named_children:
                yield _member(inner, data, owner, record_params)
        else:
            yield _member(child, data, owner, record_params)


def _member(node: Node, data: bytes, owner: str, record_params: tuple[tuple[Param, Node], ...]) -> MemberDecl:
    kind = node.type
    static = kind == "static_initializer"
    body = node.child_by_field_name("body")
    has_error = node.has_error
    outside_error = has_error and (
        body is None or not body.has_error or any(c.has_error for c in node.children if c.id != body.id)
    )
    quoted = kind not in _UNQUOTED
    head = (
        squash(slice_text(data, node) if body is None else data[node.start_byte : body.start_byte].decode())
        if quoted
        else ""
    )
    if static:
        body = node.named_children[-1] if node.named_child_count else None
    name = slice_text(data, node.child_by_field_name("name"))
    callable_ = kind in CALLABLE_NODE_KINDS
    described = callable_ or static or kind == ELEMENT_NODE_KIND  # what has modifiers and javadoc read
    params = record_params if kind == "compact_constructor_declaration" else ()
    if kind == "method_declaration" or kind == "constructor_declaration":
        params = _params(node.child_by_field_name("parameters"), data)
    doc = _javadoc(node.prev_named_sibling) if described else None
    members: tuple[MemberDecl, ...] = ()
    if kind == "enum_constant" and body is not None:
        constant_owner = f"{owner}.{name}"
        members = tuple(m for m in _members(body, data, constant_owner, ()) if m.kind in CALLABLE_NODE_KINDS)
    return MemberDecl(
        kind=kind,
        start=node.start_byte,
        end=node.end_byte,
        start_row=node.start_point.row,
        end_row=node.end_point.row,
        has_error=has_error,
        outside_error=outside_error,
        body_start=body.start_byte if body is not None else -1,
        head=head,
        owner=owner,
        name=name,
        modifiers=read_modifiers(node, data) if described else NO_MODIFIERS,
        type_params=_squashed_field(node, data, "type_parameters") if callable_ else None,
        returns=_squashed_field(node, data, "type") if described and not static else None,
        params=tuple(p for p, _ in params),
        doc_start=doc.start_byte if doc is not None else -1,
        doc_end=doc.end_byte if doc is not None else -1,
        doc_row=doc.start_point.row if doc is not None else -1,
        members=members,
    )


def _squashed_field(node: Node, data: bytes, name: str) -> str | None:
    found = node.child_by_field_name(name)
    return squash(slice_text(data, found)) if found is not None else None
