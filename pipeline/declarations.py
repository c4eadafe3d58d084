"""Type declarations of a compilation unit: names, nesting, supertypes, fields and Spring role.

Everything here is read once per type and shared by the type's own chunk and its members' chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tree_sitter import Node

from pipeline._values import value
from pipeline.annotations import Modifiers, read_modifiers
from pipeline.model import SymbolType
from pipeline.spring import BEAN_STEREOTYPES, injected_type, route_prefixes, stereotype_of
from pipeline.syntax import slice_text, text
from pipeline.types import simple_type

TYPE_KINDS: Mapping[str, SymbolType] = {
    "class_declaration": SymbolType.CLASS,
    "interface_declaration": SymbolType.INTERFACE,
    "enum_declaration": SymbolType.ENUM,
    "record_declaration": SymbolType.RECORD,
    "annotation_type_declaration": SymbolType.ANNOTATION,
}


@value
class FieldInfo:
    """A field as injection and receiver resolution need it.

    Only receiver resolution needs every field's `type`; the injection facts are derived on demand,
    as few types are beans (java.base declares some 20,000 fields and no bean).
    """

    name: str
    type: str
    type_node: Node | None
    modifiers: Modifiers
    declarator: Node | None  # None for a record component, which has no initializer

    @property
    def injected_type(self) -> str:
        """The bean type an injection into this field asks for: `List<Handler>` asks for `Handler`."""
        return injected_type(self.type_node)

    @property
    def has_initializer(self) -> bool:
        """Whether the declaration assigns a value (`= ...`)."""
        return self.declarator is not None and self.declarator.child_by_field_name("value") is not None


@value
class TypeInfo:
    """One named type declaration."""

    node: Node
    kind: SymbolType
    name: str
    nested_name: str  # Outer.Inner, without the package
    modifiers: Modifiers
    stereotype: str | None
    route_prefixes: tuple[str, ...]
    extends: tuple[str, ...]
    implements: tuple[str, ...]
    fields: tuple[FieldInfo, ...]
    body: Node | None

    @property
    def is_bean(self) -> bool:
        """Whether Spring or CDI creates instances of this type (so constructors are injection points)."""
        return self.stereotype in BEAN_STEREOTYPES

    @property
    def field_types(self) -> dict[str, str]:
        """Field name to declared simple type."""
        return {f.name: f.type for f in self.fields}


def package_of(root: Node) -> str:
    """The package name of a compilation unit, or "" for the default package."""
    for child in root.named_children:
        if child.type == "package_declaration":
            name = next((c for c in child.named_children if c.type in ("scoped_identifier", "identifier")), None)
            return text(name)
    return ""


def find_types(nodes: list[Node], data: bytes) -> Iterator[TypeInfo]:
    """Every named type among the scanned type nodes (outer before inner, local classes included).

    `data` holds the bytes the nodes were parsed from.
    """
    for node in nodes:
        name = slice_text(data, node.child_by_field_name("name"))
        if name:
            yield read_type(node, name, data)


def read_type(node: Node, name: str, data: bytes) -> TypeInfo:
    """Read one type declaration node of the tree parsed from `data`."""
    kind = TYPE_KINDS[node.type]
    modifiers = read_modifiers(node, data)
    extends, implements = _supertypes(node)
    body = node.child_by_field_name("body")
    return TypeInfo(
        node=node,
        kind=kind,
        name=name,
        nested_name=".".join([*_enclosing_names(node), name]),
        modifiers=modifiers,
        stereotype=stereotype_of(modifiers, (*extends, *implements), kind is SymbolType.INTERFACE),
        route_prefixes=route_prefixes(modifiers),
        extends=extends,
        implements=implements,
        fields=(*_record_fields(node, data), *(_fields(body, data) if body is not None else ())),
        body=body,
    )


def _enclosing_names(node: Node) -> list[str]:
    names: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in TYPE_KINDS or parent.type == "enum_constant":
            names.append(text(parent.child_by_field_name("name")))
        parent = parent.parent
    return names[::-1]


def _supertypes(node: Node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    superclass = node.child_by_field_name("superclass")
    interfaces = node.child_by_field_name("interfaces")
    extends: tuple[str, ...] = ()
    if superclass is not None:
        extends = tuple(simple_type(c) for c in superclass.named_children)
    implements = _type_list(interfaces)
    if node.type == "interface_declaration":
        ext = next((c for c in node.named_children if c.type == "extends_interfaces"), None)
        extends = _type_list(ext)
    return extends, implements


def _type_list(node: Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    lst = next((c for c in node.named_children if c.type == "type_list"), None)
    return tuple(simple_type(c) for c in lst.named_children) if lst is not None else ()


def _fields(body: Node, data: bytes) -> Iterator[FieldInfo]:
    members = body.named_children
    if body.type == "enum_body":
        decls = next((c for c in members if c.type == "enum_body_declarations"), None)
        members = decls.named_children if decls is not None else []
    for member in members:
        if member.type not in ("field_declaration", "constant_declaration"):
            continue
        modifiers = read_modifiers(member, data)
        type_node = member.child_by_field_name("type")
        field_type = simple_type(type_node)
        for declarator in member.children_by_field_name("declarator"):
            yield FieldInfo(
                name=slice_text(data, declarator.child_by_field_name("name")),
                type=field_type,
                type_node=type_node,
                modifiers=modifiers,
                declarator=declarator,
            )


def _record_fields(node: Node, data: bytes) -> Iterator[FieldInfo]:
    # Record components are private final fields of the record (JLS 8.10.3).
    if node.type != "record_declaration":
        return
    params = node.child_by_field_name("parameters")
    for param in params.named_children if params is not None else ():
        if param.type == "formal_parameter":
            type_node = param.child_by_field_name("type")
            yield FieldInfo(
                name=slice_text(data, param.child_by_field_name("name")),
                type=simple_type(type_node),
                type_node=type_node,
                modifiers=read_modifiers(param, data),
                declarator=None,
            )


def declared_types(types: list[TypeInfo], package: str) -> dict[str, str]:
    """Simple and nested names of the file's own types mapped to their fully qualified names."""
    declared: dict[str, str] = {}
    for info in types:
        fq = f"{package}.{info.nested_name}" if package else info.nested_name
        declared.setdefault(info.name, fq)  # outer types come first, so they win a name clash
    return declared
