"""The routes a Java method declares with `RouterFunctions` (WebFlux.fn, WebMvc.fn), read from its tree.

The builder: `route().GET("/x", h::f)`, a pattern, predicates or both before the handler
(`POST("/x", accept(JSON), h::f)`), `GET(h::all)` (the nest's own path), `.route(predicate, h::f)`,
`.add(otherRouter)`, `.nest(predicate, b -> b.GET(...))`, `.path("/a", b -> { b.GET(...); })` and their
`() -> route(...)` forms, a builder held in a local (`Builder b = route(); b.GET(...)`). The static forms:
`route(GET("/x"), h::f)`, `.andRoute(POST("/y"), h::g)`, `.and(route(...))`, `.andNest(path("/a"), ...)`,
`nest(path("/a"), route(...))`. Predicates: `GET("/x")` and the other verbs, `path("/x")`,
`method(HttpMethod.GET)`, `.and(...)`, `.or(...)`, `RequestPredicates.`-qualified or not; any other
(`accept`, `contentType`) matches every route. The records and the rules are Kotlin's (`pipeline.routes`).
Not read: a builder passed to another method (`.path("/a", this::petRoutes)`), a router built in a loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from pipeline.routes import (
    MAX_DEPTH,
    NONE,
    UNREAD,
    Handler,
    Literal,
    Predicate,
    PredicateReader,
    Route,
    combined,
    joined,
    routes_of,
)
from pipeline.spring import JAXRS_VERBS

_MARK = re.compile(rb"\bRouterFunctions\b")
_OWNERS = frozenset({"RouterFunctions", "RequestPredicates"})  # what a static call may be qualified with
_STATIC_LINKS = frozenset({"andRoute", "and", "andNest", "andOther"})


def declares_routers(data: bytes) -> bool:
    """Whether a Java file may declare a functional router: it names `RouterFunctions` (an import does)."""
    return _MARK.search(data) is not None


def may_route(source: bytes) -> bool:
    """Whether a method's source may hold a router (`route(`, `nest(` or a builder's `.path(`): one search."""
    return b"route(" in source or b"nest(" in source


def read_routes(method: Node, literal: Literal) -> tuple[list[Route], int]:
    """The routes declared in a method, in document order, and how many patterns were unread.

    `literal` gives a pattern's value: a string literal, or a constant the file fixes (None: unreadable).
    """
    reader = _Reader(literal)
    reader.walk(method, "", {})
    for held in list(reader.held.values()):  # a router held in a local that no nest or `and` took: its own
        reader.walk(held, "", {})
    reader.routes.sort(key=lambda r: r.rows)
    return reader.routes, reader.unread


def _text(node: Node | None) -> str:
    return (node.text or b"").decode() if node is not None else ""


def _name(call: Node) -> str:
    return _text(call.child_by_field_name("name"))


def _args(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return [a for a in arguments.named_children if a.type != "block_comment" and a.type != "line_comment"] if (
        arguments is not None
    ) else []  # fmt: skip


def _chain(outer: Node) -> list[Node]:
    """The invocations of a call chain, innermost (the root) first."""
    links = [outer]
    while (inner := links[-1].child_by_field_name("object")) is not None and inner.type == "method_invocation":
        links.append(inner)
    links.reverse()
    return links


def _static(call: Node) -> bool:
    """An unqualified call, or one on `RouterFunctions` / `RequestPredicates` (fully qualified too)."""
    target = call.child_by_field_name("object")
    return target is None or _text(target).rsplit(".", 1)[-1] in _OWNERS


def _rows(call: Node) -> tuple[int, int]:
    """A link's own rows: from its name to its closing parenthesis (a chain's node starts at the root)."""
    name, arguments = call.child_by_field_name("name"), call.child_by_field_name("arguments")
    return (name or call).start_point.row, (arguments or call).end_point.row


def handler_of(node: Node) -> Handler | None:
    """`handler::get`, `this::get`, `PetHandler::get` as a `Handler`; None for a lambda or anything else."""
    if node.type != "method_reference" or node.named_child_count != 2:
        return None
    receiver, named = node.named_children
    if named.type != "identifier":
        return None
    written = _text(receiver).removeprefix("this.")  # `this.handler::get`: the field
    return Handler("" if receiver.type == "this" else written, _text(named))


def _lambda_parts(node: Node) -> tuple[list[str], Node | None]:
    """A lambda's parameter names and its body (None, None for anything else)."""
    if node.type != "lambda_expression":
        return [], None
    params = node.child_by_field_name("parameters")
    names: list[str] = []
    if params is not None and params.type == "identifier":
        names = [_text(params)]
    elif params is not None:
        for param in params.named_children:
            named = param.child_by_field_name("name") if param.type == "formal_parameter" else param
            names.append(_text(named))
    return names, node.child_by_field_name("body")


class _Reader(PredicateReader):
    def __init__(self, literal: Literal) -> None:
        super().__init__(literal)
        self.held: dict[str, Node] = {}  # `RouterFunction<?> posts = route(...)`: read where it is nested

    def walk(self, node: Node, prefix: str, builders: dict[str, str]) -> None:
        """Routers in code: the outermost call chains under `node` that start a router or use a builder."""
        if self.depth >= MAX_DEPTH:
            self.unread += 1
            return
        self.depth += 1
        try:
            if node.type == "identifier" and (held := self.held.pop(_text(node), None)) is not None:
                self.walk(held, prefix, builders)  # `nest(path("/posts"), posts)`: the local's routes, nested
                return
            for chain in self._chains(node, prefix, builders):
                self.chain(chain, prefix, builders)
        finally:
            self.depth -= 1

    def _chains(self, node: Node, prefix: str, builders: dict[str, str]) -> Iterator[list[Node]]:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "method_invocation":
                links = _chain(current)
                if self._starts_router(links[0], builders):
                    declarator = current.parent
                    named = declarator.child_by_field_name("name") if declarator is not None else None
                    held = declarator is not None and declarator.type == "variable_declarator" and current != node
                    if held and declarator is not None and named is not None:
                        if _name(links[0]) != "route" or _args(links[0]):
                            self.held[_text(named)] = current  # a router in a local: read where it is used
                            continue
                        builders[_text(named)] = prefix  # `Builder b = route()`
                    yield links
                    continue
            stack.extend(reversed(current.named_children))

    @staticmethod
    def _starts_router(root: Node, builders: dict[str, str]) -> bool:
        target = root.child_by_field_name("object")
        if target is not None and target.type == "identifier" and _text(target) in builders:
            return True
        return _static(root) and (_name(root) == "route" or (_name(root) == "nest" and len(_args(root)) == 2))

    def chain(self, links: list[Node], prefix: str, builders: dict[str, str]) -> None:
        root, rest = links[0], links[1:]
        target = root.child_by_field_name("object")
        if target is not None and target.type == "identifier" and _text(target) in builders:
            self.builder(links, builders[_text(target)], builders)  # `b.GET(...)`: every link a builder's
            return
        arguments = _args(root)
        if _name(root) == "route" and not arguments:
            self.builder(rest, prefix, builders)
            return
        self.static(root, prefix, builders)
        for link in rest:
            if _name(link) in _STATIC_LINKS:
                self.static(link, prefix, builders)

    def static(self, call: Node, prefix: str, builders: dict[str, str]) -> None:
        """`route(p, h)` / `andRoute(p, h)`, `nest(p, r)` / `andNest(p, r)`, `and(r)` / `andOther(r)`."""
        name, arguments = _name(call), _args(call)
        if name in ("route", "andRoute") and len(arguments) == 2:
            self.add(call, self.predicates(arguments[0]), prefix, arguments[-1])
        elif name in ("nest", "andNest") and len(arguments) == 2:
            for predicate in self.predicates(arguments[0]):
                if predicate != UNREAD:
                    self.walk(arguments[1], joined(prefix, predicate.path), builders)
        elif name in ("and", "andOther") and len(arguments) == 1:
            self.walk(arguments[0], prefix, builders)

    def builder(self, links: list[Node], prefix: str, builders: dict[str, str]) -> None:
        """The links of a `RouterFunctions.Builder` chain under `prefix` (`filter`, `build` and the like add none)."""
        for link in links:
            name, arguments = _name(link), _args(link)
            if name in JAXRS_VERBS and arguments:
                self.add(link, self.verb_predicates(name, arguments[:-1]), prefix, arguments[-1])
            elif name == "route" and len(arguments) == 2:
                self.add(link, self.predicates(arguments[0]), prefix, arguments[-1])
            elif name == "add" and len(arguments) == 1:
                self.walk(arguments[0], prefix, builders)
            elif name in ("nest", "path") and len(arguments) == 2:
                found = [self.pattern(arguments[0], None)] if name == "path" else self.predicates(arguments[0])
                for predicate in found:
                    if predicate != UNREAD:
                        self.nested(arguments[1], joined(prefix, predicate.path), builders)

    def nested(self, node: Node, prefix: str, builders: dict[str, str]) -> None:
        """A nest's routes: `b -> b.GET(...)` (a builder under `prefix`), `() -> route(...)`; other forms unread."""
        names, body = _lambda_parts(node)
        if body is None or len(names) > 1:
            self.unread += 1
            return
        self.walk(body, prefix, {**builders, names[0]: prefix} if names else builders)

    def add(self, call: Node, predicates: list[Predicate], prefix: str, handler: Node) -> None:
        self.routes.extend(routes_of(predicates, prefix, _rows(call), handler_of(handler)))

    def verb_predicates(self, verb: str, before: list[Node]) -> list[Predicate]:
        """A builder verb's pattern and predicates (those before the handler) as one predicate per alternative."""
        found = [Predicate(verb, None)]
        for index, node in enumerate(before):
            if index == 0 and node.type != "method_invocation":  # `GET("/x", ...)`: a pattern, else a predicate
                found = combined("and", found, [self.pattern(node, None)])
            else:
                found = combined("and", found, self.predicates(node))
        return found

    def alternatives(self, node: Node) -> list[Predicate]:
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            return self.predicates(node.named_children[0])
        if node.type != "method_invocation":
            return [NONE]
        name, arguments = _name(node), _args(node)
        target = node.child_by_field_name("object")
        if name in ("and", "or") and len(arguments) == 1 and target is not None and not _static(node):
            return combined(name, self.predicates(target), self.predicates(arguments[0]))
        if not _static(node):
            return [NONE]
        if name in JAXRS_VERBS:
            return [self.pattern(arguments[0], name) if arguments else Predicate(name, None)]
        if name == "path" and len(arguments) == 1:
            return [self.pattern(arguments[0], None)]
        if name == "method" and len(arguments) == 1:
            verb = _text(arguments[0]).rsplit(".", 1)[-1]
            return [Predicate(verb, None) if verb in JAXRS_VERBS else NONE]
        return [NONE]
