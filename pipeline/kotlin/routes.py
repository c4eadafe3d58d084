"""The routes a Kotlin router DSL declares: `router { ... }` (WebMvc.fn, WebFlux.fn) and `coRouter { ... }`.

Read inside a `router`/`coRouter` lambda: `GET("/x", handler::fn)`, `GET("/x") { request -> ... }`,
`GET(handler::all)` (the nest's own path), a pattern with predicates (`GET("/x", accept(JSON), h::f)`),
`"/api".nest { ... }`, `path("/a").nest { ... }`, `accept(JSON).nest { ... }` (the prefix kept),
`(GET("/a") or GET("/b")).invoke(h::f)` and `"/x"(h::f)` (any method); routes under an `if` or in a
loop's lambda (`years.forEach { ... }`) too, when their pattern is spelt. A nested path is joined the way
Spring joins a class prefix and a method path (`pipeline.spring.join_path`). A pattern the file does not
spell as a literal or a constant is not a route (it is counted as `unread`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from pipeline.kotlin.grammar import child, children, has_token
from pipeline.kotlin.http import STRINGS, name_of
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
from pipeline.syntax import text

ROUTERS = frozenset({"router", "coRouter"})
_MARK = re.compile(rb"\b(?:" + b"|".join(re.escape(r.encode()) for r in sorted(ROUTERS)) + rb")\s*\{")
_PATH_PREDICATE = "path"
_HANDLERS = frozenset({"callable_reference", "navigation_expression"})


def declares_routers(data: bytes) -> bool:
    """Whether a file's source may declare a router (`router {`, `coRouter {`): one search, most files do not."""
    return _MARK.search(data) is not None


def read_routes(member: Node, literal: Literal) -> tuple[list[Route], int]:
    """The routes of the router DSL blocks in a member, in document order, and how many patterns were unread.

    `literal` gives a pattern's value: a string literal, or a constant the file fixes (None: unreadable).
    """
    reader = _Reader(literal)
    for lam in _router_lambdas(member):
        reader.block(lam, "")
    reader.routes.sort(key=lambda r: r.rows)
    return reader.routes, reader.unread


def _router_lambdas(node: Node) -> Iterator[Node]:
    """The lambdas of `router { }` / `coRouter { }` calls under a node (not those nested in another router)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "call_expression" and current.named_children:
            callee = current.named_children[0]
            lam = _lambda_of(current)
            if callee.type == "identifier" and text(callee) in ROUTERS and lam is not None:
                yield lam
                continue
        stack.extend(reversed(current.named_children))


def _lambda_of(call: Node) -> Node | None:
    annotated = child(call, "annotated_lambda")
    return child(annotated, "lambda_literal") if annotated is not None else None


def _arguments(call: Node) -> list[Node]:
    arguments = child(call, "value_arguments")
    found = children(arguments, "value_argument") if arguments is not None else []
    return [a.named_children[-1] for a in found if a.named_children]


def handler_of(node: Node) -> Handler | None:
    """`handler::fn`, `::fn`, `this::fn` as a `Handler`; None for anything else."""
    if node.type not in _HANDLERS or not has_token(node, "::") or not node.named_children:
        return None
    named = node.named_children[-1]
    if named.type != "identifier":
        return None
    receiver = text(node.named_children[0]) if node.named_child_count == 2 else ""
    return Handler("" if receiver.startswith("this") else receiver, text(named))  # `this@Routes::f` too


class _Reader(PredicateReader):
    def block(self, lam: Node, prefix: str) -> None:
        if self.depth >= MAX_DEPTH:  # hostile nesting: read to this depth, not to Python's recursion limit
            self.unread += 1
            return
        self.depth += 1
        try:
            self.statements(lam, prefix)
        finally:
            self.depth -= 1

    def statements(self, lam: Node, prefix: str) -> None:
        for statement in lam.named_children:
            if statement.type == "statements":  # some grammar versions wrap a lambda's statements
                self.block(statement, prefix)
            elif statement.type == "call_expression" and statement.named_children:
                self.statement(statement, prefix)
            elif statement.type == "if_expression":  # `if (seo) { GET("/robots.txt") { ... } } else GET(...)`
                for branch in statement.named_children[1:]:
                    if branch.type in ("block", "control_structure_body"):
                        self.block(branch, prefix)
                    elif branch.type == "call_expression" and branch.named_children:
                        self.statement(branch, prefix)

    def statement(self, call: Node, prefix: str) -> None:
        callee = call.named_children[0]
        lam = _lambda_of(call)
        arguments = _arguments(call)
        if callee.type == "identifier" and text(callee) in JAXRS_VERBS:  # `GET("/x", h::f)`, `GET("/x") { }`
            handlers = [h for a in arguments if (h := handler_of(a)) is not None]
            if handlers or lam is not None:
                self.add(call, [self.verb_predicate(text(callee), arguments)], prefix, handlers)
            return
        if callee.type == "navigation_expression" and callee.named_child_count == 2:
            receiver, named = callee.named_children
            if text(named) == "nest" and lam is not None:
                for predicate in self.predicates(receiver):
                    if predicate != UNREAD:
                        self.block(lam, joined(prefix, predicate.path))
            elif text(named) == "invoke":
                self.add(call, self.predicates(receiver), prefix, [h for a in arguments if (h := handler_of(a))])
            elif lam is not None:  # `years.forEach { year -> GET("/$year") { ... } }`: routes in a loop
                self.block(lam, prefix)
            return
        if callee.type in ("call_expression", *STRINGS, "parenthesized_expression"):  # `GET("/x") { }`, `"/x"(h::f)`
            handlers = [h for a in arguments if (h := handler_of(a)) is not None]
            if handlers or lam is not None:
                self.add(call, self.predicates(callee), prefix, handlers)

    def add(self, call: Node, predicates: list[Predicate], prefix: str, handlers: list[Handler]) -> None:
        rows = (call.start_point.row, call.end_point.row)
        self.routes.extend(routes_of(predicates, prefix, rows, handlers[-1] if handlers else None))

    def verb_predicate(self, verb: str, arguments: list[Node]) -> Predicate:
        pattern = arguments[0] if arguments and handler_of(arguments[0]) is None else None
        if pattern is None or pattern.type not in (*STRINGS, "identifier", "navigation_expression"):
            return Predicate(verb, None)  # `GET(h::all)`, `GET(accept(JSON), h::f)`: the nest's own path
        return self.pattern(pattern, verb)

    def alternatives(self, node: Node) -> list[Predicate]:
        kind = node.type
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.predicates(node.named_children[0])
        if kind == "infix_expression" and node.named_child_count == 3:
            left, word, right = node.named_children
            return combined(text(word), self.predicates(left), self.predicates(right))
        if kind in STRINGS:
            return [self.pattern(node, None)]
        if kind != "call_expression" or not node.named_children:
            return [NONE]
        callee, arguments = node.named_children[0], _arguments(node)
        if callee.type == "navigation_expression" and callee.named_child_count == 2:  # `GET("/a").or(GET("/b"))`
            method = text(callee.named_children[1])
            if method in ("and", "or") and arguments:
                return combined(method, self.predicates(callee.named_children[0]), self.predicates(arguments[0]))
            return [NONE]
        name = text(callee) if callee.type == "identifier" else ""
        if name in JAXRS_VERBS:
            return [self.verb_predicate(name, arguments)]
        if name == _PATH_PREDICATE and arguments:
            return [self.pattern(arguments[0], None)]
        if name == "method" and arguments and (verb := name_of(arguments[0])) in JAXRS_VERBS:
            return [Predicate(verb, None)]
        return [NONE]
