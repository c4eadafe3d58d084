"""The HTTP client calls of a method body, read from its tree: `RestTemplate`, `RestClient`, `WebClient`.

The outline (`pipeline.outline`) has every call with its receiver but not its arguments; the URI and
the HTTP method of a client call are in the arguments. So the few methods whose outline calls name a
client method (`wants_arguments`, on the calls `pipeline.calls` resolved) are read again from the tree,
the way a long method is for splitting (`pipeline.syntax.node_at`): the rest of the pipeline never pays.

URIs are evaluated from string literals, `+` concatenation, the file's `static final String` constants,
the method's own local variables and the fields its type fixes to one literal or a `@Value` default
(`pipeline.field_values`); anything else is a variable (`pipeline.outbound.Var`). Each candidate call is
written as a `pipeline.client_calls.ClientCall`, whose rules tell the client, method and route.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial

from tree_sitter import Node

from pipeline.client_calls import (
    MAX_NESTING,
    Arg,
    ClientCall,
    Link,
    classify,
    is_candidate,
    mentions_clients,
    wants_arguments,
)
from pipeline.field_values import NO_VALUES, FieldScope, FieldValues
from pipeline.outbound import OutboundRoute, Piece, Var, spelt_out
from pipeline.outline import CALLABLE_NODE_KINDS

__all__ = ["file_constants", "http_calls", "mentions_clients", "spelt", "wants_arguments"]

_BODIES = frozenset({"block", "lambda_expression"})  # no constants of the file's types inside
_MAX_DEPTH = 16  # constants defined through constants, at most this deep


class _Scope(FieldScope):
    """The names a body's URIs may use (`FieldScope`), read from Java's tree."""

    def __init__(
        self, data: bytes, constants: Mapping[str, Node], fields: Mapping[str, str], field_values: FieldValues
    ) -> None:
        super().__init__(constants, fields, field_values)
        self.data = data

    def links(self, node: Node) -> tuple[Link, ...]:
        """The call chain `node` is."""
        return _chain(node, self)[0]

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def declare(self, node: Node) -> None:
        """A local variable declaration or a parameter: its type, and its initializer as its value."""
        type_node = node.child_by_field_name("type")
        declared = self.text(type_node).split("<", 1)[0] if type_node is not None else ""
        if node.type == "formal_parameter":
            name = node.child_by_field_name("name")
            if name is not None:
                self.types[self.text(name)] = declared
                self.values.pop(self.text(name), None)
                self.known.pop(self.text(name), None)
                self.defaults.pop(self.text(name), None)
                self.bases.pop(self.text(name), None)
            return
        for declarator in node.children_by_field_name("declarator"):
            name, init = declarator.child_by_field_name("name"), declarator.child_by_field_name("value")
            if name is None:
                continue
            self.types[self.text(name)] = declared
            self.known.pop(self.text(name), None)
            self.defaults.pop(self.text(name), None)
            self.bases.pop(self.text(name), None)
            if init is not None:
                self.values[self.text(name)] = init
            else:
                self.values.pop(self.text(name), None)

    def pieces(self, node: Node, depth: int = 0, nesting: int = 0) -> list[Piece]:
        """A string expression as literal pieces and variables; nested deeper than `MAX_NESTING`, a variable."""
        kind = node.type
        if kind == "string_literal":
            return [_literal(self.text(node))]
        if kind in ("decimal_integer_literal", "character_literal"):  # `"/page/" + 2`
            return [self.text(node).strip("'")]
        if nesting >= MAX_NESTING:  # `"a" + "b" + ...` a thousand times: not read to Python's recursion limit
            return [Var(self.text(node))]
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.pieces(node.named_children[0], depth, nesting + 1)
        if kind == "binary_expression" and self.text(node.child_by_field_name("operator") or node) == "+":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None:
                return [*self.pieces(left, depth, nesting + 1), *self.pieces(right, depth, nesting + 1)]
        name = _name_of(node, self)
        if name is not None and depth < _MAX_DEPTH and name in self.values:
            return self.pieces(self.values[name], depth + 1, nesting + 1)
        if name is not None and name in self.known:
            return [self.known[name]]
        return [Var(self.text(node))]


def _name_of(node: Node, scope: _Scope) -> str | None:
    """The constant or local a name refers to: `X`, `this.x`, `Paths.X` (a constant of the file's types)."""
    if node.type == "identifier":
        return scope.text(node)
    if node.type == "field_access":
        target = node.child_by_field_name("object")
        field = node.child_by_field_name("field")
        if field is not None and target is not None and (target.type in ("this", "identifier")):
            return scope.text(field)
    return None


def _literal(source: str) -> str:
    body = source[1:-1] if len(source) >= 2 else ""
    return body.replace('\\"', '"').replace("\\\\", "\\")


def file_constants(root: Node, data: bytes) -> dict[str, Node]:
    """The initializers of the file's `static final` fields and interface constants, by field name."""
    found: dict[str, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("field_declaration", "constant_declaration"):
            modifiers = next((c for c in node.children if c.type == "modifiers"), None)
            words = data[modifiers.start_byte : modifiers.end_byte].decode().split() if modifiers is not None else []
            if kind == "constant_declaration" or ("static" in words and "final" in words):
                for declarator in node.children_by_field_name("declarator"):
                    name, init = declarator.child_by_field_name("name"), declarator.child_by_field_name("value")
                    if name is not None and init is not None:
                        found.setdefault(data[name.start_byte : name.end_byte].decode(), init)
            continue
        if kind in CALLABLE_NODE_KINDS or kind in _BODIES:
            continue
        stack.extend(node.children)
    return found


def http_calls(
    method: Node,
    data: bytes,
    constants: Mapping[str, Node],
    fields: Mapping[str, str],
    field_values: FieldValues = NO_VALUES,
) -> list[tuple[int, OutboundRoute]]:
    """The HTTP client calls in a method's body as (row, route), in document order.

    `constants` are the file's (`file_constants`), `fields` the enclosing types' field types by name,
    `field_values` the string values those types fix for their fields (`pipeline.field_values.enclosing_values`).
    """
    scope = _Scope(data, constants, fields, field_values)
    found: list[tuple[int, OutboundRoute]] = []
    for node in _preorder(method):
        kind = node.type
        if kind in ("local_variable_declaration", "formal_parameter"):
            scope.declare(node)
        elif kind == "method_invocation":
            route = _call(node, scope)
            if route is not None:
                found.append((node.start_point.row, route))
    return found


def spelt(node: Node, data: bytes, constants: Mapping[str, Node]) -> str | None:
    """A string expression's value when literals and the file's constants spell all of it (a route's pattern)."""
    return spelt_out(_Scope(data, constants, {}, NO_VALUES).pieces(node))


def _preorder(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _call(node: Node, scope: _Scope) -> OutboundRoute | None:
    name_node, target = node.child_by_field_name("name"), node.child_by_field_name("object")
    args = node.child_by_field_name("arguments")
    if name_node is None or target is None or args is None or not is_candidate(name := scope.text(name_node)):
        return None
    chain, root = _chain(target, scope)  # `client.get().uri(...)`: the links before `uri`
    call = ClientCall(
        name=name, arguments=_arguments(args, scope), target=scope.text(target),
        named_target=target.type in ("identifier", "field_access"), chain=chain, root=root,
    )  # fmt: skip
    return classify(call, scope)


def _chain(link: Node | None, scope: _Scope) -> tuple[tuple[Link, ...], str]:
    """The calls an expression is made of, outermost first, and what the first is called on ("": no call)."""
    chain: list[Link] = []
    root = ""
    while link is not None and link.type == "method_invocation":
        link_name, link_args = link.child_by_field_name("name"), link.child_by_field_name("arguments")
        chain.append(Link(scope.text(link_name) if link_name is not None else "", _arguments(link_args, scope)))
        link = link.child_by_field_name("object")
        root = scope.text(link) if link is not None else root
    return tuple(chain), root


def _arguments(args: Node | None, scope: _Scope) -> tuple[Arg, ...]:
    return tuple(_argument(a, scope) for a in (args.named_children if args is not None else ()))


def _argument(node: Node, scope: _Scope) -> Arg:
    written = scope.text(node)
    name = written.rsplit(".", 1)[-1] if node.type in ("field_access", "identifier") else None
    pieces = None if node.type == "lambda_expression" else partial(scope.pieces, node)
    return Arg(written, name, pieces)
