"""The HTTP client calls of a method body, read from its tree: `RestTemplate`, `RestClient`, `WebClient`.

The outline (`pipeline.outline`) has every call with its receiver but not its arguments; the URI and
the HTTP method of a client call are in the arguments. So the few methods whose outline calls name a
client method (`wants_arguments`, on the calls `pipeline.calls` resolved) are read again from the tree,
the way a long method is for splitting (`pipeline.syntax.node_at`): the rest of the pipeline never pays.

URIs are evaluated from string literals, `+` concatenation, the file's `static final String` constants,
the method's own local variables and the fields its type fixes to one literal or a `@Value` default
(`pipeline.field_values`); anything else is a variable (`pipeline.outbound.Var`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from tree_sitter import Node

from pipeline.field_values import BASE_CALLS, NO_VALUES, FieldValues
from pipeline.outbound import Client, OutboundRoute, Piece, Var, inline_defaults, unresolved, uri_route
from pipeline.outline import CALLABLE_NODE_KINDS
from pipeline.spring import ANY_METHOD, JAXRS_VERBS, split_url

REST_TEMPLATE_VERBS: Mapping[str, str | None] = {
    "getForObject": "GET",
    "getForEntity": "GET",
    "postForObject": "POST",
    "postForEntity": "POST",
    "postForLocation": "POST",
    "put": "PUT",
    "delete": "DELETE",
    "patchForObject": "PATCH",
    "headForHeaders": "HEAD",
    "optionsForAllow": "OPTIONS",
    "exchange": None,  # the method is an argument: `HttpMethod.POST`
}
REST_TEMPLATE_TYPES = frozenset({"RestTemplate", "RestOperations", "TestRestTemplate", "OAuth2RestTemplate"})
FLUENT_VERBS = frozenset({"get", "post", "put", "delete", "patch", "head", "options"})
_BODIES = frozenset({"block", "lambda_expression"})  # no constants of the file's types inside
_MAX_DEPTH = 16  # constants defined through constants, at most this deep


def _fluent_owner(owner: str) -> bool:
    return any(f".{verb}()" in owner for verb in (*FLUENT_VERBS, "method"))


_CLIENT_MARKS = (b"estTemplate", b"estOperations", b"ebClient", b"estClient")
"""What a file that makes client calls spells: `RestTemplate` or `restTemplate`, `WebClient`, `RestClient`."""


def mentions_clients(data: bytes) -> bool:
    """Whether a file's source names an HTTP client at all (one byte search each): most files do not."""
    return any(mark in data for mark in _CLIENT_MARKS)


_SUFFIXES = tuple(f".{name}" for name in (*REST_TEMPLATE_VERBS, "uri"))


def wants_arguments(calls: tuple[str, ...]) -> bool:
    """Whether a method's calls (`Receiver.method`, as `pipeline.calls` writes them) include an HTTP client call."""
    for call in calls:
        if not call.endswith(_SUFFIXES):  # nearly every call: one C-level test
            continue
        owner, _, name = call.rpartition(".")
        if name in REST_TEMPLATE_VERBS and _rest_template(owner, {}):
            return True
        if name == "uri" and _fluent_owner(owner):
            return True
    return False


def _rest_template(receiver: str, types: Mapping[str, str]) -> bool:
    """A receiver that is a RestTemplate: its declared type, else its name (`restTemplate`, `this.rest`)."""
    last = receiver.rsplit(".", 1)[-1]
    declared = types.get(last, last)
    return declared in REST_TEMPLATE_TYPES or "resttemplate" in last.lower() or "restoperations" in last.lower()


PROPERTIES_TYPES = ("Properties", "Props", "Config", "Configuration", "Settings")
"""How the names of `@ConfigurationProperties` classes end, by convention (a getter of another type is code)."""
_GETTER = re.compile(r"(?P<receiver>(?:this\.)?[a-z_$][\w$]*)\.(?P<get>get)?(?P<field>[A-Za-z_$][\w$]*)\(\)")


class _Scope:
    """The names a body's URIs may use: the file's constants and the method's locals, with their types."""

    def __init__(
        self, data: bytes, constants: Mapping[str, Node], fields: Mapping[str, str], field_values: FieldValues
    ) -> None:
        self.data = data
        self.values: dict[str, Node] = dict(constants)
        self.types: dict[str, str] = dict(fields)
        self.known: dict[str, str] = dict(field_values.known)  # fields the type fixes (`pipeline.field_values`)
        self.defaults: dict[str, str] = dict(field_values.defaults)
        self.bases: dict[str, str] = dict(field_values.bases)  # fields holding a client built with a base URL

    def base_of(self, receiver: str) -> str | None:
        """The base URL of the client a name holds: a field's (`FieldValues.bases`), or a local's initializer's."""
        name = receiver.removeprefix("this.")
        if name in self.bases:
            return self.bases[name]
        node = self.values.get(name)
        while node is not None and node.type == "method_invocation":
            call, args = node.child_by_field_name("name"), node.child_by_field_name("arguments")
            if call is not None and self.text(call) in BASE_CALLS and args is not None and args.named_children:
                return "".join(p for p in self.pieces(args.named_children[0]) if isinstance(p, str)) or None
            node = node.child_by_field_name("object")
        return None

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

    def pieces(self, node: Node, depth: int = 0) -> list[Piece]:
        """A string expression as literal pieces and variables."""
        kind = node.type
        if kind == "string_literal":
            return [_literal(self.text(node))]
        if kind in ("decimal_integer_literal", "character_literal"):  # `"/page/" + 2`
            return [self.text(node).strip("'")]
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.pieces(node.named_children[0], depth)
        if kind == "binary_expression" and self.text(node.child_by_field_name("operator") or node) == "+":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None:
                return [*self.pieces(left, depth), *self.pieces(right, depth)]
        name = _name_of(node, self)
        if name is not None and depth < _MAX_DEPTH and name in self.values:
            return self.pieces(self.values[name], depth + 1)
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


def _preorder(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _call(node: Node, scope: _Scope) -> OutboundRoute | None:
    name_node, target = node.child_by_field_name("name"), node.child_by_field_name("object")
    args = node.child_by_field_name("arguments")
    if name_node is None or target is None or args is None:
        return None
    name = scope.text(name_node)
    arguments = args.named_children
    if name in REST_TEMPLATE_VERBS and target.type in ("identifier", "field_access"):
        if not _rest_template(scope.text(target), scope.types) or not arguments:
            return None
        verb = REST_TEMPLATE_VERBS[name] or _http_method(arguments[1:], scope)
        return _route(Client.REST_TEMPLATE, verb, arguments[0], scope, scope.base_of(scope.text(target)))
    if name == "uri" and arguments:
        chain = _fluent_chain(target, scope)
        if chain is not None:
            client, verb, base = chain
            return _route(client, verb, arguments[0], scope, base)
    return None


def _route(client: Client, verb: str, uri: Node, scope: _Scope, base: str | None) -> OutboundRoute:
    pieces = scope.pieces(uri) if uri.type != "lambda_expression" else []
    if pieces and isinstance(pieces[0], Var) and (bound := _bound_property(pieces[0].name, scope)) is not None:
        pieces = [bound, *pieces[1:]]  # `props.getVisitsUrl() + "/x"`: the property the getter's field binds
    read = uri_route(pieces, base) if pieces else None
    if read is None:
        service = _default_service(pieces, scope)  # an unresolved call's service: its base field's default's
        return OutboundRoute(client=client, method=verb, service=service, path=unresolved(scope.text(uri)))
    service, path = read
    return OutboundRoute(client=client, method=verb, service=service, path=path)


def _bound_property(expression: str, scope: _Scope) -> str | None:
    """`props.getVisitsUrl()` as `${ClientProperties.visitsUrl}`: a query reads the key that field binds.

    Only for a receiver typed `*Properties` (`PROPERTIES_TYPES`: a `@ConfigurationProperties` class by
    convention); `app.search.services` finds the type's binding.
    """
    match = _GETTER.fullmatch(expression.replace(" ", ""))
    if match is None:
        return None
    declared = scope.types.get(match["receiver"].removeprefix("this."), "").rsplit(".", 1)[-1]
    if not declared.endswith(PROPERTIES_TYPES):
        return None
    field = match["field"]
    field = field[:1].lower() + field[1:] if match["get"] else field
    return "${" + declared + "." + field + "}"


def _default_service(pieces: list[Piece], scope: _Scope) -> str | None:
    """The service named by the default of the field a URI starts with (`hostname`, `this.hostname`), if any."""
    first = pieces[0] if pieces else None
    if not isinstance(first, Var):
        return None
    default = scope.defaults.get(first.name.removeprefix("this."))
    return split_url(inline_defaults(default))[0] if default is not None else None


def _http_method(arguments: list[Node], scope: _Scope) -> str:
    """`HttpMethod.POST` (or a static import `POST`) among the arguments; `ANY` when none names one."""
    for arg in arguments:
        text = scope.text(arg).rsplit(".", 1)[-1]
        if arg.type in ("field_access", "identifier") and text in JAXRS_VERBS:
            return text
    return ANY_METHOD


def _fluent_chain(target: Node, scope: _Scope) -> tuple[Client, str, str | None] | None:
    """`client.get()`, `client.method(HttpMethod.POST)` before `.uri(...)`: the client kind, verb and any base URL."""
    verb: str | None = None
    base: str | None = None
    node: Node | None = target
    root = ""
    while node is not None and node.type == "method_invocation":
        name_node, args = node.child_by_field_name("name"), node.child_by_field_name("arguments")
        name = scope.text(name_node) if name_node is not None else ""
        arguments = args.named_children if args is not None else []
        if verb is None and name in FLUENT_VERBS and not arguments:
            verb = name.upper()
        elif verb is None and name == "method" and arguments:
            verb = _http_method(arguments, scope)
        elif name in BASE_CALLS and arguments:
            literal = "".join(p for p in scope.pieces(arguments[0]) if isinstance(p, str))
            base = base or literal or None
        node = node.child_by_field_name("object")
        root = scope.text(node) if node is not None else root
    if verb is None:
        return None
    return _client_kind(root, scope.types), verb, base or scope.base_of(root)


def _client_kind(root: str, types: Mapping[str, str]) -> Client:
    last = root.rsplit(".", 1)[-1]
    declared = types.get(last, last)
    return Client.REST_CLIENT if "restclient" in declared.lower() else Client.WEB_CLIENT
