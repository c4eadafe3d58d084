"""Functional routes (`RouterFunction`s), the records both languages' readers write and the rules they share.

Java's `RouterFunctions.route()` builder and static `route(...)` (`pipeline.java_routes`) and Kotlin's
`router { }` DSL (`pipeline.kotlin.routes`) are read into `Route`s: a verb, a full path, the rows
declaring it and its handler reference. A request predicate reads as a list of `Predicate`s, one per
alternative (`or`); `combined` is Spring's `and`/`or`. Where a route is stored is one rule for both
(docs/decisions.md, "The Kotlin router DSL: routes stored where declared"): on the chunk of a handler
declared in the same file (`Routing.attributed`, set by `attribute`), else on the router function's
chunk, cut into one part per route when its verbs times its paths are not exactly its routes (`place`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from tree_sitter import Node

from pipeline.drafts import Draft, Part
from pipeline.model import SymbolType
from pipeline.splitting import LineSpan
from pipeline.spring import ANY_METHOD, join_path

MAX_DEPTH = 64  # nests and predicate operands read one inside the other, at most


class Handler(NamedTuple):
    """A method reference: its receiver as written (`handler`; "" for `::fn` / `this::fn`) and the method's name."""

    receiver: str
    name: str


class Route(NamedTuple):
    """One route of a router: its verb (`ANY` for every method), full path, rows and handler (None: a lambda)."""

    verb: str
    path: str
    rows: tuple[int, int]
    handler: Handler | None


class Predicate(NamedTuple):
    """What one alternative of a request predicate matches: a verb, a path (None: any)."""

    verb: str | None
    path: str | None


NONE = Predicate(None, None)  # `accept(JSON)`: no route of its own
UNREAD = Predicate("?", None)  # a pattern the file does not spell: neither it nor what it nests is a route


Literal = Callable[[Node], str | None]
"""A reader's constant folding: the string a pattern node spells, None when the file does not spell it."""


class PredicateReader:
    """What both languages' route readers share: the routes read, the patterns not read, and the nesting guard.

    A subclass reads its language's request predicates (`alternatives`); `predicates` guards the depth, so a
    hostile nesting is read to `MAX_DEPTH` and counted as unread, not to Python's recursion limit.
    """

    def __init__(self, literal: Literal) -> None:
        self.literal = literal
        self.routes: list[Route] = []
        self.unread = 0
        self.depth = 0  # nests and predicates being read, one inside the other

    def pattern(self, node: Node, verb: str | None) -> Predicate:
        """A path pattern the file spells, for `verb` (None: any); `UNREAD`, counted, when it does not."""
        value = self.literal(node)
        if value is None:
            self.unread += 1
            return UNREAD
        return Predicate(verb, value)

    def predicates(self, node: Node) -> list[Predicate]:
        """What a request predicate matches, one entry per alternative (`or`)."""
        if self.depth >= MAX_DEPTH:
            self.unread += 1
            return [UNREAD]
        self.depth += 1
        try:
            return self.alternatives(node)
        finally:
            self.depth -= 1

    def alternatives(self, node: Node) -> list[Predicate]:
        """The language's reading of one request predicate (`predicates` guards its depth)."""
        raise NotImplementedError


def combined(word: str, left: list[Predicate], right: list[Predicate]) -> list[Predicate]:
    """`left and right` / `left or right`, alternative by alternative (any other word: no route)."""
    if word == "or":
        return [*left, *right]
    if word != "and":
        return [NONE]
    return [
        UNREAD
        if UNREAD in (a, b)
        else Predicate(a.verb or b.verb, joined(a.path, b.path) if a.path and b.path else a.path or b.path)
        for a in left
        for b in right
    ]


def joined(prefix: str | None, path: str | None) -> str:
    """A nested path under its prefix, joined as Spring joins a class prefix and a method path."""
    if not path:
        return prefix or "/"
    return join_path(prefix or "", path) if prefix else join_path("", path)


def routes_of(predicates: list[Predicate], prefix: str, rows: tuple[int, int], handler: Handler | None) -> list[Route]:
    """The routes a handler gets under these predicates (none for an unread pattern or a predicate of no route)."""
    return [
        Route(p.verb or ANY_METHOD, joined(prefix, p.path), rows, handler)
        for p in predicates
        if p != UNREAD and (p.path is not None or p.verb is not None)
    ]


def route_groups(routes: list[Route], rows: tuple[int, int]) -> list[tuple[tuple[int, int], list[Route]]]:
    """The rows of a router function cut into one piece per route (routes on shared rows together), in order.

    Each piece runs from the row after the previous piece to its last route's last row; the last piece
    to the function's end, so the pieces cover the function as a split method's parts do.
    """
    groups: list[tuple[tuple[int, int], list[Route]]] = []
    for route in routes:  # sorted by rows
        if groups and route.rows[0] <= groups[-1][0][1]:
            (first, last), members = groups[-1]
            groups[-1] = ((first, max(last, route.rows[1])), [*members, route])
        else:
            first = groups[-1][0][1] + 1 if groups else rows[0]
            groups.append(((first, route.rows[1]), [route]))
    if groups:
        (first, _), members = groups[-1]
        groups[-1] = ((first, rows[1]), members)
    return groups


class Routing(NamedTuple):
    """A router file's state: the methods its types declare, and the routes found to be theirs."""

    handlers: frozenset[tuple[str, str]]  # (qualified type, method name)
    attributed: dict[tuple[str, str], list[Route]]  # routes whose handler is one of those, for its own chunk


class Placed(NamedTuple):
    """What a router function keeps: its verbs and paths, and its parts (cut one per route when needed)."""

    verbs: tuple[str, ...]
    paths: tuple[str, ...]
    parts: tuple[Part, ...]


CallsIn = Callable[[tuple[int, int], tuple[int, int]], tuple[tuple[str, ...], tuple[str, ...]]]


def place(
    routes: Sequence[Route],
    target_of: Callable[[Handler], tuple[str, str] | None],
    routing: Routing,
    parts: tuple[Part, ...],
    calls_in: CallsIn,
) -> Placed | None:
    """A router function's routes: a handler of this file's gets its route (`Routing.attributed`); None: none left.

    The others stay on the router function: its verbs and paths when they are exactly its routes (one
    verb, or one path), else one part per route (`route_groups`), each with its own calls.
    """
    here: list[Route] = []
    for route in routes:
        target = target_of(route.handler) if route.handler is not None else None
        if target in routing.handlers:
            routing.attributed.setdefault(target, []).append(route)
        else:
            here.append(route)
    if not here:
        return None
    verbs, paths = tuple(dict.fromkeys(r.verb for r in here)), tuple(dict.fromkeys(r.path for r in here))
    if len(verbs) == 1 or len(paths) == 1:
        return Placed(verbs, paths, parts)  # verbs times paths is exactly the routes
    rows = parts[0].rows.first, parts[-1].rows.last
    cut = []
    for span, group in route_groups(sorted(here, key=lambda r: r.rows), rows):
        own_verbs, own_paths = tuple(dict.fromkeys(r.verb for r in group)), tuple(dict.fromkeys(r.path for r in group))
        cut.append(Part(LineSpan(*span), *calls_in(span, rows), http_method=own_verbs, http_path=own_paths))
    return Placed(verbs, paths, tuple(cut))


def attribute(drafts: Sequence[Draft], attributed: dict[tuple[str, str], list[Route]]) -> None:
    """The routes of this file's routers on the chunks of the methods that handle them."""
    for draft in drafts:
        chunk = draft.chunk
        routes = attributed.get((chunk.enclosing_type or "", chunk.name))
        if routes and chunk.symbol_type is SymbolType.METHOD:
            _set(chunk, "http_method", tuple(dict.fromkeys((*chunk.http_method, *(r.verb for r in routes)))))
            _set(chunk, "http_path", tuple(dict.fromkeys((*chunk.http_path, *(r.path for r in routes)))))


_set = object.__setattr__
