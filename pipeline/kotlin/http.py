r"""The HTTP client calls of a Kotlin function, written as `pipeline.client_calls` records and told by its rules.

What differs from Java is syntax only: a URI is evaluated from string literals and templates
(`"$base/owners/${id}"`: each template a variable, or its value when the body fixes it), `+`, the file's
`const val`s and top-level `val`s, the function's locals and the fields its type fixes (`pipeline.field_values`
settles those: a property only ever given one literal, or `@Value("\\${key:default}")` on a property or
on the constructor parameter a property is initialized from, kept as written; the base URL of a client a
property holds, `WebClient.create(x)` / `.baseUrl(x)` / `.rootUri(x)`). Which calls are client calls, and the
route each makes, is `pipeline.client_calls`' and so Java's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import partial

from tree_sitter import Node

from pipeline.client_calls import BASE_CALLS, MAX_NESTING, Arg, ClientCall, Link, classify, is_candidate
from pipeline.field_values import (
    NO_VALUES,
    Assigned,
    Declared,
    FieldScope,
    FieldValues,
    base_argument,
    nearest_first,
    placeholder_value,
    settle,
)
from pipeline.kotlin.annotations import annotation_of
from pipeline.kotlin.grammar import child, children, has_token
from pipeline.kotlin.reader import TYPE_NODES, KType, constructed_type, declared_value, simple_type
from pipeline.outbound import OutboundRoute, Piece, Var, spelt_out
from pipeline.syntax import text

STRINGS = frozenset({"string_literal", "multiline_string_literal"})
_ESCAPES = {"$": "$", '"': '"', "\\": "\\", "'": "'", "n": "\n", "t": "\t", "r": "\r", "b": "\b"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LAMBDAS = frozenset({"lambda_literal", "annotated_lambda", "anonymous_function", "callable_reference"})
_MAX_DEPTH = 16  # constants defined through constants, at most this deep
_TYPES = frozenset({"user_type", "nullable_type"})


class Scope(FieldScope):
    """The names a body's URIs may use (`FieldScope`), read from Kotlin's tree; `declare` adds the body's locals."""

    def links(self, node: Node) -> tuple[Link, ...]:
        """The call chain `node` is."""
        return _chain(node, self)[0]

    def declare(self, name: str, kind: str, value: Node | None) -> None:
        """A parameter or local: its type, and its initializer as its value (a parameter has none)."""
        self.types[name] = kind
        self.known.pop(name, None)
        self.defaults.pop(name, None)
        self.bases.pop(name, None)
        if value is not None:
            self.values[name] = value
        else:
            self.values.pop(name, None)

    def pieces(self, node: Node, depth: int = 0, nesting: int = 0) -> list[Piece]:
        """An expression as literal pieces and variables (`pipeline.outbound.Piece`); too deep, a variable."""
        kind = node.type
        if nesting >= MAX_NESTING:  # hostile input: not read to Python's recursion limit
            return [Var(text(node))]
        inner = partial(self.pieces, depth=depth, nesting=nesting + 1)
        if kind in STRINGS:
            return string_pieces(node, partial(self._name, depth=depth, nesting=nesting + 1), inner)
        if kind in ("number_literal", "character_literal"):  # `"/page/" + 2`
            return [text(node).strip("'")]
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return inner(node.named_children[0])
        if kind == "binary_expression" and has_token(node, "+") and node.named_child_count == 2:
            left, right = node.named_children
            return [*inner(left), *inner(right)]
        name = name_of(node)
        return self._name(name, text(node), depth, nesting) if name is not None else [Var(text(node))]

    def _name(self, name: str, written: str, depth: int, nesting: int) -> list[Piece]:
        if depth < _MAX_DEPTH and name in self.values:
            return self.pieces(self.values[name], depth + 1, nesting + 1)
        if name in self.known:
            return [self.known[name]]
        return [Var(written)]


def name_of(node: Node) -> str | None:
    """The constant, local or field an expression names: `x`, `this.x`, `Paths.X`."""
    if node.type == "identifier":
        return text(node)
    if node.type == "navigation_expression" and node.named_child_count == 2 and has_token(node, "."):
        target, field = node.named_children
        if field.type == "identifier" and target.type in ("this_expression", "identifier"):
            return text(field)
    return None


def string_pieces(node: Node, named: partial[list[Piece]], inner: partial[list[Piece]]) -> list[Piece]:
    """A string literal's pieces: its text, each template (`$name`, `${expression}`) evaluated."""
    out: list[Piece] = []
    dollar = False  # the 1.1.0 grammar reads `$name` as a `$` content followed by one starting with the name
    for part in node.named_children:
        kind, written = part.type, text(part)
        if kind == "string_content" and written == "$" and not dollar:
            dollar = True
            continue
        if dollar:
            dollar = False
            match = _IDENTIFIER.match(written) if kind == "string_content" else None
            if match is None:
                out.append("$")
            else:
                out.extend(named(match.group(), match.group()))
                written = written[match.end() :]
        if kind == "interpolation":
            expression = part.named_children[-1] if part.named_children else None
            out.extend(inner(expression) if expression is not None else [Var(written)])
        elif kind == "escape_sequence":
            out.append(_ESCAPES.get(written[1:], written) if len(written) == 2 else _unicode(written))
        elif written:
            out.append(written)
    if dollar:
        out.append("$")
    return _joined(out)


def _unicode(escape: str) -> str:
    try:
        return chr(int(escape[2:], 16))
    except ValueError:
        return escape


def _joined(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for piece in pieces:
        if out and isinstance(piece, str) and isinstance(out[-1], str):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def literal(node: Node | None) -> str | None:
    """A string literal without templates as its value; None for anything else."""
    if node is None or node.type not in STRINGS:
        return None
    return spelt_out(Scope({}, {}, NO_VALUES).pieces(node))


def file_constants(root: Node) -> dict[str, Node]:
    """The initializers of the file's `const val`s (top level, objects, companions) and top-level `val`s, by name."""
    found: dict[str, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "property_declaration":
            mods = child(node, "modifiers")
            const = mods is not None and any(text(m) == "const" for m in mods.named_children)
            name, value = declared_value(node)
            if name and value is not None and (const or (node.parent == root and has_token(node, "val"))):
                found.setdefault(name, value)
            continue
        if node.type not in ("function_declaration", "lambda_literal", "anonymous_initializer"):
            stack.extend(node.named_children)
    return found


def local_type(node: Node, value: Node | None) -> str:
    """A local's simple type: declared (`val x: T`), else the constructor it is initialized with (`= T(...)`)."""
    variable = child(node, "variable_declaration")
    declared = next((c for c in variable.named_children if c.type in _TYPES), None) if variable else None
    return simple_type(declared) or constructed_type(value)


def type_values(info: KType) -> FieldValues:
    """The values a type fixes for its properties, and the defaults others replace (`pipeline.field_values.settle`)."""
    declared: list[Declared] = []
    injected: dict[str, str] = {}  # primary constructor parameters with `@Value`, which initializers may name
    primary = child(info.node, "primary_constructor")
    params = child(primary, "class_parameters") if primary is not None else None
    for param in children(params, "class_parameter") if params is not None else []:
        name, placeholder = text(child(param, "identifier")), _value_annotation(child(param, "modifiers"))
        if has_token(param, "val") or has_token(param, "var"):
            declared.append(Declared(name, placeholder, False, None))
        elif placeholder is not None:
            injected[name] = placeholder
    body = info.body
    for node in children(body, "property_declaration") if body is not None else []:
        name, value = declared_value(node)
        if name:
            fixed = literal(value) if value is None or value.type != "identifier" else injected.get(text(value))
            annotation = _value_annotation(child(node, "modifiers"))
            declared.append(Declared(name, annotation, value is not None, fixed, _client_base(value, injected)))
    if not declared:
        return NO_VALUES
    return settle(declared, _assignments(body) if body is not None else ())


def _client_base(value: Node | None, injected: Mapping[str, str]) -> str | None:
    """The base URL a property's client is built with (`BASE_CALLS`): a literal, a `@Value` parameter's, `@property`."""
    node = value
    while node is not None and node.type == "call_expression" and node.named_children:
        callee = node.named_children[0]
        named = callee.named_children[-1] if callee.type == "navigation_expression" else callee
        arguments = _expressions(child(node, "value_arguments"))
        if named.type == "identifier" and text(named) in BASE_CALLS and arguments:
            return base_argument(literal(arguments[0]), name_of(arguments[0]), injected)
        node = callee.named_children[0] if callee.type == "navigation_expression" else None
    return None


def _value_annotation(mods: Node | None) -> str | None:
    for each in children(mods, "annotation") if mods is not None else []:
        if annotation_of(each).name == "Value":
            call = child(each, "constructor_invocation")
            arguments = child(call, "value_arguments") if call is not None else None
            first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
            return placeholder_value(literal(first.named_children[-1] if first and first.named_children else None))
    return None


def _assignments(body: Node) -> Iterator[Assigned]:
    """Each assignment to a name in a type's own body (nested types excluded): its literal, a client's base."""
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.type in TYPE_NODES:
            continue
        if node.type == "assignment" and node.named_child_count == 2:
            left, right = node.named_children
            name = name_of(left)
            if name is not None and has_token(node, "="):
                yield Assigned(name, literal(right), _client_base(right, {}))
            elif name is not None:
                yield Assigned(name, None)
        stack.extend(node.named_children)


def enclosing_values(info: KType | None, values: Mapping[int, FieldValues]) -> FieldValues:
    """The values a member sees: its type's, then the outer types' it does not shadow (keyed by type node start)."""
    bodies: list[FieldValues] = []
    while info is not None:
        bodies.append(values.get(info.node.start_byte, NO_VALUES))
        info = info.outer
    return nearest_first(bodies)


def http_calls(member: Node, scope: Scope) -> list[tuple[int, OutboundRoute]]:
    """The HTTP client calls in a member as (row, route), in document order."""
    found: list[tuple[int, OutboundRoute]] = []
    stack = [member]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "parameter" and (named := child(node, "identifier")) is not None:
            declared = next((c for c in node.named_children if c.type in _TYPES), None)
            scope.declare(text(named), simple_type(declared), None)
        elif kind == "property_declaration" and node is not member:
            name, value = declared_value(node)
            if name:
                scope.declare(name, local_type(node, value), value)
        elif kind == "call_expression":
            route = _call(node, scope)
            if route is not None:
                found.append((node.start_point.row, route))
        stack.extend(reversed(node.named_children))
    return found


def _call(node: Node, scope: Scope) -> OutboundRoute | None:
    callee = node.named_children[0] if node.named_children else None
    if callee is None or callee.type != "navigation_expression" or callee.named_child_count != 2:
        return None
    target, named = callee.named_children
    if named.type != "identifier" or not is_candidate(name := text(named)):
        return None
    chain, root = _chain(target, scope)
    call = ClientCall(
        name=name, arguments=_arguments(node, scope), target=text(target), named_target=name_of(target) is not None,
        chain=chain, root=root,
    )  # fmt: skip
    return classify(call, scope)


def _chain(link: Node | None, scope: Scope) -> tuple[tuple[Link, ...], str]:
    """The calls an expression is made of, outermost first, and what the first is called on ("": no receiver)."""
    chain: list[Link] = []
    root = ""
    while link is not None and link.type == "call_expression" and link.named_children:
        inner = link.named_children[0]
        arguments = _arguments(link, scope)
        if inner.type == "navigation_expression" and inner.named_child_count == 2:
            chain.append(Link(text(inner.named_children[1]), arguments))
            link = inner.named_children[0]
            root = text(link)
        elif inner.type == "identifier":
            chain.append(Link(text(inner), arguments))
            link = None
        else:
            link = None
    return tuple(chain), root


def _arguments(call: Node, scope: Scope) -> tuple[Arg, ...]:
    lam = child(call, "annotated_lambda")  # `uri { builder -> ... }`: a trailing lambda is the last argument
    found = (*_expressions(child(call, "value_arguments")), *((lam,) if lam is not None else ()))
    return tuple(_argument(a, scope) for a in found)


def _expressions(arguments: Node | None) -> Sequence[Node]:
    """The expressions of a call's value arguments (a named argument's value)."""
    if arguments is None:
        return ()
    return [a.named_children[-1] for a in children(arguments, "value_argument") if a.named_children]


def _argument(node: Node, scope: Scope) -> Arg:
    name = None  # `POST`, `HttpMethod.POST`: what a method argument names
    if node.type == "identifier":
        name = text(node)
    elif node.type == "navigation_expression" and has_token(node, ".") and node.named_children[-1].type == "identifier":
        name = text(node.named_children[-1])
    pieces = None if node.type in _LAMBDAS or has_token(node, "::") else partial(scope.pieces, node)
    return Arg(text(node), name, pieces)
