"""The string values a type fixes for its fields: fields only ever assigned literals, and `@Value` defaults (issue 28).

A client's base URL is often a field: `private String host = "http://things-service/";`, or one set in
the constructor, or a property injected with a literal default (`@Value("${things.url:http://things}")`,
on the field or on the constructor parameter the field is assigned from). A field's value is known
when every assignment to it in its type (initializer, constructor, any method) is that same literal;
a setter (`this.host = host`) or two different literals leave it unknown. A property without a default
is its placeholder (`${things.url}`), which `pipeline.outbound.uri_route` reads as a configured base.

Only the type's own body is read (nested and anonymous types are their own scope); the answer is keyed
by the body's start byte, and `enclosing_values` gives a method the values of its type and the types
around it, nearest first. A field declared with a literal that other assignments replace keeps it as its
default (`FieldValues.defaults`): not its value, but the evidence an unresolved call shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from tree_sitter import Node

from pipeline.outline import TYPE_NODE_KINDS

_BODIES = frozenset({"class_body", "enum_body_declarations", "interface_body"})
_UNKNOWN = None  # a field assigned something other than a literal


class FieldValues(NamedTuple):
    """What a type fixes of its fields: `known` values, and the `defaults` of fields other assignments change."""

    known: dict[str, str]
    defaults: dict[str, str]  # a literal initializer (or `@Value` default) that a setter or another value replaces


NO_VALUES = FieldValues({}, {})


def file_field_values(root: Node, data: bytes) -> dict[int, FieldValues]:
    """Per type body (its start byte), the fields whose every assignment in the type is the same literal."""
    found: dict[int, FieldValues] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _BODIES:
            values = _body_values(node, data)
            if values.known or values.defaults:
                found[node.start_byte] = values
        stack.extend(node.named_children)
    return found


def enclosing_values(method: Node, values: Mapping[int, FieldValues]) -> FieldValues:
    """The field values a method sees: its type's, then the enclosing types' fields its type does not shadow."""
    seen = FieldValues({}, {})
    node: Node | None = method.parent
    while node is not None:
        if node.type in _BODIES and (body := values.get(node.start_byte)) is not None:
            for name in body.known.keys() | body.defaults.keys():
                if name not in seen.known and name not in seen.defaults:
                    if name in body.known:
                        seen.known[name] = body.known[name]
                    else:
                        seen.defaults[name] = body.defaults[name]
        node = node.parent
    return seen


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _literal(node: Node, data: bytes) -> str | None:
    if node.type != "string_literal":
        return None
    source = _text(node, data)
    return source[1:-1].replace('\\"', '"').replace("\\\\", "\\") if len(source) >= 2 else None


def injected_value(modifiers: Node | None, data: bytes) -> str | None:
    """What `@Value("${key:default}")` among these modifiers injects as a literal: the default, else `${key}`."""
    if modifiers is None:
        return None
    for child in modifiers.named_children:
        if child.type != "annotation" or _text(child.child_by_field_name("name") or child, data) != "Value":
            continue
        arguments = child.child_by_field_name("arguments")
        return placeholder_value(
            next((_literal(a, data) for a in (arguments.named_children if arguments else [])), None)
        )
    return None


def placeholder_value(literal: str | None) -> str | None:
    """What `@Value(literal)` injects as far as the source tells: `${key:default}`'s default, else `${key}`."""
    if literal is None or not literal.startswith("${") or not literal.endswith("}"):
        return None
    key, colon, default = literal[2:-1].partition(":")
    return default if colon and default and "${" not in default else "${" + key + "}"


def _modifiers(node: Node) -> Node | None:
    return next((c for c in node.children if c.type == "modifiers"), None)


def _body_values(body: Node, data: bytes) -> FieldValues:
    declared = [
        Declared(name, injected, init is not None, _literal(init, data) if init is not None else None)
        for name, injected, init in _declared(body, data)
    ]
    return settle(declared, _assigned(body, data, {d.name for d in declared}) if declared else ())


class Declared(NamedTuple):
    """A field as declared: its name, what `@Value` injects (None), whether it is initialized, and to what literal."""

    name: str
    injected: str | None
    initialized: bool
    literal: str | None  # the initializer's literal; None when it is none or is not a literal


def settle(declared: Iterable[Declared], assignments: Iterable[tuple[str, str | None]]) -> FieldValues:
    """The values fields keep: each field's one literal over its declaration and every assignment in its type.

    `assignments` are (field, literal or None for anything else), in any order; fields not declared are ignored.
    """
    assigned: dict[str, str | None] = {}  # field -> its one literal, or _UNKNOWN
    initial: dict[str, str] = {}  # the declaration's literal (initializer or `@Value` default)

    def assign(name: str, literal: str | None) -> None:
        if name in assigned and assigned[name] != literal:
            assigned[name] = _UNKNOWN
        else:
            assigned[name] = literal

    fields: set[str] = set()
    for name, injected, initialized, literal in declared:
        fields.add(name)
        if injected is not None:
            assign(name, injected)
        if initialized:
            assign(name, literal)
        if (value := assigned.get(name)) is not None:
            initial[name] = value
    if not fields:
        return NO_VALUES
    for name, literal in assignments:
        if name in fields:
            assign(name, literal)
    known = {name: text for name, text in assigned.items() if text is not None}
    return FieldValues(known, {name: text for name, text in initial.items() if name not in known})


def _assigned(body: Node, data: bytes, fields: set[str]) -> Iterator[tuple[str, str | None]]:
    """Each assignment to a field in a type's own body: the field and the literal it is given (None: not one)."""
    for node, parameters in _assignments(body, data):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        target = _assigned_field(left, data) if left is not None else None
        if target is None or target not in fields:
            continue
        operator = node.child_by_field_name("operator")
        if right is None or (operator is not None and _text(operator, data) != "="):
            yield target, _UNKNOWN
            continue
        literal = _literal(right, data)
        if literal is None and right.type == "identifier":
            literal = parameters.get(_text(right, data))
        yield target, literal


def _declared(body: Node, data: bytes) -> Iterator[tuple[str, str | None, Node | None]]:
    """The fields a type body declares: name, what `@Value` injects (None), initializer (None)."""
    for member in body.named_children:
        if member.type != "field_declaration":
            continue
        injected = injected_value(_modifiers(member), data)
        for declarator in member.children_by_field_name("declarator"):
            name_node = declarator.child_by_field_name("name")
            if name_node is not None:
                yield _text(name_node, data), injected, declarator.child_by_field_name("value")


def _assigned_field(left: Node, data: bytes) -> str | None:
    if left.type == "identifier":
        return _text(left, data)
    if left.type == "field_access":
        target, field = left.child_by_field_name("object"), left.child_by_field_name("field")
        if target is not None and field is not None and target.type == "this":
            return _text(field, data)
    return None


def _assignments(body: Node, data: bytes) -> Iterator[tuple[Node, dict[str, str]]]:
    """Every assignment in a type's own body, with the `@Value` parameters of the constructor it is in."""
    for member in body.named_children:
        if member.type in TYPE_NODE_KINDS:
            continue  # a nested type's assignments are its own
        parameters: dict[str, str] = {}
        if member.type == "constructor_declaration":
            parameters = _injected_parameters(member, data)
        stack = [member]
        while stack:
            node = stack.pop()
            if node.type == "assignment_expression":
                yield node, parameters
            stack.extend(c for c in node.named_children if c.type not in _BODIES)


def _injected_parameters(constructor: Node, data: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    params = constructor.child_by_field_name("parameters")
    for param in params.named_children if params is not None else []:
        name = param.child_by_field_name("name")
        text = injected_value(_modifiers(param), data)
        if name is not None and text is not None:
            found[_text(name, data)] = text
    return found
