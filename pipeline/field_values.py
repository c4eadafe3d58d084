"""The string values a type fixes for its fields: fields only ever assigned literals, and `@Value` defaults (issue 28).

A client's base URL is often a field: `private String host = "http://things-service/";`, or one set in
the constructor, or a property injected with a literal default (`@Value("${things.url:http://things}")`,
on the field or on the constructor parameter the field is assigned from). A field's value is known
when every assignment to it in its type (initializer, constructor, any method) is that same literal;
a setter (`this.host = host`) or two different literals leave it unknown. A property (`${things.url}`,
with or without a default) is kept as written and read by `pipeline.outbound.uri_route` as a configured base.
A field holding an HTTP client keeps the base URL it was built with (`FieldValues.bases`).

The rules (`settle` over `Declared` and `Assigned` records, `placeholder_value`, `base_argument`,
`nearest_first`) are Kotlin's too (`pipeline.kotlin.http` writes the records from its tree).

Only the type's own body is read (nested and anonymous types are their own scope); the answer is keyed
by the body's start byte, and `enclosing_values` gives a method the values of its type and the types
around it, nearest first. A field declared with a literal that other assignments replace keeps it as its
default (`FieldValues.defaults`): not its value, but the evidence an unresolved call shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple

from tree_sitter import Node

from pipeline.client_calls import BASE_CALLS, Link, client_base
from pipeline.outline import TYPE_NODE_KINDS

_BODIES = frozenset({"class_body", "enum_body_declarations", "interface_body"})
_UNKNOWN = None  # a field assigned something other than a literal


class FieldValues(NamedTuple):
    """What a type fixes of its fields: `known` values, and the `defaults` of fields other assignments change."""

    known: dict[str, str]
    defaults: dict[str, str]  # a literal initializer (or `@Value` default) that a setter or another value replaces
    # The base URL of the HTTP client a field holds (`WebClient.create(x)`, `.baseUrl(x)`, `.rootUri(x)`, with x
    # a literal, a `@Value` field or constructor parameter), when every assignment to the field gives the same.
    bases: dict[str, str] = {}  # noqa: RUF012 (never mutated: a fresh dict is built per type)


NO_VALUES = FieldValues({}, {})


class FieldScope:
    """The names a method body's URIs may use, as Java's and Kotlin's readers keep them.

    The file's constants and the body's locals (`values`: name → the node it is given), declared `types`,
    and what the type fixes of its fields (`FieldValues`: `known`, `defaults`, `bases`). `links` is the
    reader's own: the call chain a node is, as `pipeline.client_calls.Link`s.
    """

    def __init__(self, constants: Mapping[str, Node], types: Mapping[str, str], values: FieldValues) -> None:
        self.values: dict[str, Node] = dict(constants)
        self.types: dict[str, str] = dict(types)
        self.known: dict[str, str] = dict(values.known)
        self.defaults: dict[str, str] = dict(values.defaults)
        self.bases: dict[str, str] = dict(values.bases)  # fields holding a client built with a base URL

    def base_of(self, name: str) -> str | None:
        """The base URL of the client a name holds: a field's (`FieldValues.bases`), or a local's initializer's."""
        if name in self.bases:
            return self.bases[name]
        node = self.values.get(name)
        return client_base(self.links(node)) if node is not None else None

    def links(self, node: Node) -> tuple[Link, ...]:
        """The call chain `node` is (each language's reader says)."""
        raise NotImplementedError


def file_field_values(root: Node, data: bytes) -> dict[int, FieldValues]:
    """Per type body (its start byte), the fields whose every assignment in the type is the same literal."""
    found: dict[int, FieldValues] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _BODIES:
            values = _body_values(node, data)
            if values.known or values.defaults or values.bases:
                found[node.start_byte] = values
        stack.extend(node.named_children)
    return found


def enclosing_values(method: Node, values: Mapping[int, FieldValues]) -> FieldValues:
    """The field values a method sees: its type's, then the enclosing types' fields its type does not shadow."""
    bodies: list[FieldValues] = []
    node: Node | None = method.parent
    while node is not None:
        if node.type in _BODIES and (body := values.get(node.start_byte)) is not None:
            bodies.append(body)
        node = node.parent
    return nearest_first(bodies)


def nearest_first(bodies: Iterable[FieldValues]) -> FieldValues:
    """The values of nested types' fields, nearest type first: an inner type's field shadows an outer one's."""
    seen = FieldValues({}, {}, {})
    for body in bodies:
        for name, base in body.bases.items():
            seen.bases.setdefault(name, base)
        for name in body.known.keys() | body.defaults.keys():
            if name not in seen.known and name not in seen.defaults:
                if name in body.known:
                    seen.known[name] = body.known[name]
                else:
                    seen.defaults[name] = body.defaults[name]
    return seen


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _literal(node: Node, data: bytes) -> str | None:
    if node.type != "string_literal":
        return None
    source = _text(node, data)
    return source[1:-1].replace('\\"', '"').replace("\\\\", "\\") if len(source) >= 2 else None


def injected_value(modifiers: Node | None, data: bytes) -> str | None:
    """What `@Value("${key:default}")` among these modifiers injects (`placeholder_value`: as written)."""
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
    """What `@Value(literal)` injects, as written (`${key:default}`): the property decides at query time.

    `pipeline.outbound.configured_route` reads it as a base URL (its default's host and path until the
    configuration is read, `app.search.services`); elsewhere in a URI, `inline_defaults` reads its default.
    """
    if literal is None or not literal.startswith("${") or not literal.endswith("}"):
        return None
    return literal


def _modifiers(node: Node) -> Node | None:
    return next((c for c in node.children if c.type == "modifiers"), None)


def _body_values(body: Node, data: bytes) -> FieldValues:
    declared = [
        Declared(
            name,
            injected,
            init is not None,
            _literal(init, data) if init is not None else None,
            _client_base(init, data, {}) if init is not None else None,
        )
        for name, injected, init in _declared(body, data)
    ]
    return settle(declared, _assigned(body, data, {d.name for d in declared}) if declared else ())


class Declared(NamedTuple):
    """A field as declared: its name, what `@Value` injects (None), whether it is initialized, and to what literal."""

    name: str
    injected: str | None
    initialized: bool
    literal: str | None  # the initializer's literal; None when it is none or is not a literal
    base: str | None = None  # the base URL of the client the initializer builds (`Assigned.base`)


class Assigned(NamedTuple):
    """An assignment to a field in its type: the literal it is given (None: anything else), the client's base."""

    name: str
    literal: str | None
    # The base URL of the HTTP client the value is built with (`client_calls.BASE_CALLS`): a literal, a `@Value`
    # placeholder, or `@field` for another field's value; None when it builds no client or the base is unknown.
    base: str | None = None


def settle(declared: Iterable[Declared], assignments: Iterable[Assigned]) -> FieldValues:
    """The values fields keep: each field's one literal over its declaration and every assignment in its type.

    `assignments` are in any order; fields not declared are ignored. A field holding a client keeps the base
    URL it was built with when every assignment that gives one gives the same (`FieldValues.bases`).
    """
    assigned: dict[str, str | None] = {}  # field -> its one literal, or _UNKNOWN
    initial: dict[str, str] = {}  # the declaration's literal (initializer or `@Value` default)
    bases: dict[str, str | None] = {}  # field -> the base URL of the client it holds (a literal, or `@name`)

    def assign(into: dict[str, str | None], name: str, literal: str | None) -> None:
        into[name] = _UNKNOWN if name in into and into[name] != literal else literal

    fields: set[str] = set()
    for name, injected, initialized, literal, base in declared:
        fields.add(name)
        if injected is not None:
            assign(assigned, name, injected)
        if initialized:
            assign(assigned, name, literal)
        if base is not None:
            assign(bases, name, base)
        if (value := assigned.get(name)) is not None:
            initial[name] = value
    if not fields:
        return NO_VALUES
    for name, literal, base in assignments:
        if name in fields:
            assign(assigned, name, literal)
            if base is not None:
                assign(bases, name, base)
    return _settled(assigned, initial, bases)


def _settled(assigned: dict[str, str | None], initial: dict[str, str], bases: dict[str, str | None]) -> FieldValues:
    """The values once every assignment is seen: a client's base named by a field (`@name`) is that field's value."""
    known = {name: text for name, text in assigned.items() if text is not None}
    held = {name: known.get(b[1:]) if b.startswith("@") else b for name, b in bases.items() if b is not None}
    return FieldValues(
        known,
        {name: text for name, text in initial.items() if name not in known},
        {name: base for name, base in held.items() if base is not None},
    )


def _assigned(body: Node, data: bytes, fields: set[str]) -> Iterator[Assigned]:
    """Each assignment to a field in a type's own body: the field, the literal it is given, a client's base."""
    for node, parameters in _assignments(body, data):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        target = _assigned_field(left, data) if left is not None else None
        if target is None or target not in fields:
            continue
        operator = node.child_by_field_name("operator")
        if right is None or (operator is not None and _text(operator, data) != "="):
            yield Assigned(target, _UNKNOWN)
            continue
        literal = _literal(right, data)
        if literal is None and right.type == "identifier":
            literal = parameters.get(_text(right, data))
        yield Assigned(target, literal, _client_base(right, data, parameters))


def _client_base(node: Node, data: bytes, parameters: Mapping[str, str]) -> str | None:
    """The base URL a client-building chain is given (`BASE_CALLS`): a literal, a `@Value` parameter's, `@field`."""
    current: Node | None = node
    while current is not None and current.type == "method_invocation":
        name, arguments = current.child_by_field_name("name"), current.child_by_field_name("arguments")
        if name is not None and _text(name, data) in BASE_CALLS and arguments is not None and arguments.named_children:
            argument = arguments.named_children[0]
            named = _assigned_field(argument, data) if argument.type in ("identifier", "field_access") else None
            return base_argument(_literal(argument, data), named, parameters)
        current = current.child_by_field_name("object")
    return None


def base_argument(literal: str | None, named: str | None, parameters: Mapping[str, str]) -> str | None:
    """A client's base URL argument as `Assigned.base`: its literal, a `@Value` parameter's placeholder, `@field`.

    A name that is no `@Value` parameter is a field: `@name`, its value once settled. Anything else: None.
    """
    if literal is not None or named is None:
        return literal
    return parameters.get(named, "@" + named)


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
