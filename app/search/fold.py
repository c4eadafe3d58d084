"""A method's bodiless declaration and its implementation, both ranked, are one answer (issue 26, `fold`).

In Spring code a service interface declares `validated(String)` with no body, `VerifyServiceImpl` implements
it, and a question in words ("how is a verification code emailed to a user") finds both, since both carry
its words (the interface's Javadoc, the implementation's code): the pair takes two of the first five places
and pushes the next behaviour out. They are one method: the implementation, which has the body, is shown
once at the better of the two places, and it says where it is declared (`Hit.declaration`).

A pair is a bodiless method (`bodiless`: an interface's or an abstract one) and a method with a body of the
same name and parameter types (`signature_key`) in a type that implements or extends the declaring type,
as the type chunks among the candidates tell (their `implements_fq` / `extends_fq`) and, for the types they
do not settle, those types' own declarations (`app.search.hierarchy`, one store call). Nothing else is
folded: a controller method of the same name calls the service, it is not the same method; an exact match
of the structural indexes (a symbol or route the question names, a relation's answer) keeps its place, so
the exact questions answer as before. Declarations on the page are folded, into implementations among the first
`WINDOW` hits (or the page, when longer): the first hits of a search are the same whatever its limit.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from app.auth.access import Access
from app.search.boosts import enabled
from app.search.hierarchy import Declaration, simple_name
from app.search.hits import Hit
from app.search.ranking import WINDOW
from app.search.reader import Reader
from app.search.scoping import Filters
from app.store.filters import any_of
from pipeline.model import TYPE_SYMBOLS, Chunk, SymbolType

SIGNAL = "fold"
SINGLE_ONLY = False
"""Fold a declaration only when one implementation of it is among the hits (True), or into the best-ranked of
them whatever their number (False, measured: docs/performance.md)."""
_GENERICS = re.compile(r"<[^<>]*>")

Pair = tuple[int, int]
"""(declaration, implementation): positions in a ranked list."""


def bodiless(chunk: Chunk) -> bool:
    """Whether a method chunk has no body: an interface's or an abstract method (`void send(String to);`)."""
    if chunk.symbol_type is not SymbolType.METHOD or chunk.part_count > 1:
        return False
    if "abstract" in chunk.modifiers:
        return True
    code = chunk.code.rstrip()
    if chunk.language == "kotlin":
        after = _after_parameters(code)
        return "=" not in after and "{" not in after
    return code.endswith(";")


def _after_parameters(code: str) -> str:
    """A Kotlin function's text after its parameter list: its return type and body (`= ...` or `{ ... }`), if any."""
    fun = code.find("fun ")
    start = code.find("(", fun) if fun >= 0 else -1
    if start < 0:  # a property's accessor (`val name: String get() = ...`): all of it
        return code
    depth = 0
    for at in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[at], 0)
        if depth == 0:
            return code[at + 1 :]
    return ""


def signature_key(chunk: Chunk) -> tuple[str, tuple[str, ...]]:
    """A method's name and parameter types as a declaration and its implementation both write them.

    Generic arguments and qualifiers dropped (`java.util.List<String>` ~ `List<T>` ~ `List`), varargs as arrays.
    """
    return chunk.name, tuple(_plain_type(t) for t in chunk.parameter_types)


def _plain_type(written: str) -> str:
    text = written.replace(" ", "").replace("...", "[]")
    while (stripped := _GENERICS.sub("", text)) != text:
        text = stripped
    return simple_name(text)


def candidate_pairs(chunks: Sequence[Chunk], exact: Collection[int] = (), within: int | None = None) -> list[Pair]:
    """Bodiless methods (among the first `within`) and methods with a body of the same `signature_key` in another type.

    Positions in `exact` (matches of the structural indexes) are in no pair, nor is a declared HTTP client's
    method (Feign's, `@HttpExchange`'s: `Chunk.outbound`): the client's proxy runs it, and a class implementing
    the client is its fallback, not the method asked about. The hierarchy decides which
    of these are a declaration and its implementation (`confirmed`).
    """
    declared: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    bodied: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for i, chunk in enumerate(chunks):
        if chunk.symbol_type is not SymbolType.METHOD or chunk.enclosing_type is None or i in exact:
            continue
        if not bodiless(chunk):
            bodied.setdefault(signature_key(chunk), []).append(i)
        elif not chunk.outbound and (
            within is None or i < within
        ):  # an HTTP client's method: a proxy runs it, a class implementing it is a fallback
            declared.setdefault(signature_key(chunk), []).append(i)
    return [
        (d, i)
        for key, decls in declared.items()
        for d in decls
        for i in bodied.get(key, ())
        if chunks[i].enclosing_type != chunks[d].enclosing_type
    ]


def known_parents(chunks: Iterable[Chunk | Declaration]) -> dict[str, tuple[str, ...]]:
    """The direct supertypes the type chunks among `chunks` name: fq → resolved fqs, then unresolved simple names."""
    parents: dict[str, tuple[str, ...]] = {}
    for chunk in chunks:
        if chunk.symbol_type in TYPE_SYMBOLS:
            resolved = (*chunk.extends_fq, *chunk.implements_fq)
            named = {simple_name(fq) for fq in resolved}
            loose = tuple(s for s in (*chunk.extends, *chunk.implements) if simple_name(s) not in named)
            parents[chunk.qualified_name] = (*resolved, *loose)
    return parents


def inherits(subtype: str, supertype: str, parents: Mapping[str, tuple[str, ...]]) -> bool | None:
    """Whether `subtype` implements or extends `supertype` (fqs), as `parents` tell; None when they cannot tell.

    A supertype its file could not resolve (a wildcard import) is written by its simple name and matches by it.
    """
    if subtype not in parents:
        return None
    short = simple_name(supertype)
    seen = {subtype}
    level = [subtype]
    unknown = False
    while level:
        following: list[str] = []
        for fq in level:
            for parent in parents.get(fq, ()):
                if parent == supertype or ("." not in parent and simple_name(parent) == short):
                    return True
                if parent not in seen:
                    seen.add(parent)
                    following.append(parent)
                    unknown |= parent not in parents and "." in parent
        level = following
    return None if unknown else False


def confirmed(chunks: Sequence[Chunk], pairs: Iterable[Pair], parents: Mapping[str, tuple[str, ...]]) -> list[Pair]:
    """The `pairs` whose implementation's type implements or extends the declaring type, as `parents` tell."""
    return [pair for pair in pairs if _implements(chunks, pair, parents) is True]


def undecided(chunks: Sequence[Chunk], pairs: Iterable[Pair], parents: Mapping[str, tuple[str, ...]]) -> set[str]:
    """The implementing types of `pairs` whose supertypes `parents` cannot tell: those the store is asked about."""
    return {chunks[i].enclosing_type or "" for d, i in pairs if _implements(chunks, (d, i), parents) is None}


def _implements(chunks: Sequence[Chunk], pair: Pair, parents: Mapping[str, tuple[str, ...]]) -> bool | None:
    """`inherits` of a pair's implementing type and declaring type."""
    d, i = pair
    return inherits(chunks[i].enclosing_type or "", chunks[d].enclosing_type or "", parents)


def folded(size: int, pairs: Iterable[Pair], *, single_only: bool = False) -> tuple[list[int], dict[int, int]]:
    """`range(size)` (a ranked list's positions) with each declaration folded into its implementation.

    Each declaration folds into its best-ranked implementation (with `single_only`, only when it has one),
    which takes the better of the two positions; an implementation takes one declaration, its best-ranked.
    Returns the positions in their new order and, for each implementation that took one, its declaration.
    """
    implementations: dict[int, list[int]] = {}
    for d, i in sorted(set(pairs)):
        implementations.setdefault(d, []).append(i)
    declaration: dict[int, int] = {}
    for d, found in sorted(implementations.items()):
        if single_only and len(found) > 1:
            continue
        free = [i for i in found if i not in declaration]
        if free:
            declaration[min(free)] = d
    at = {min(d, i): i for i, d in declaration.items()}
    gone = {max(d, i) for i, d in declaration.items()}
    return [at.get(p, p) for p in range(size) if p not in gone], declaration


async def folded_hits(
    reader: Reader, access: Access, filters: Filters, hits: Sequence[Hit], exact: Collection[str], limit: int
) -> list[Hit]:
    """`hits` (ranked) with each declaration among the first `limit` folded into its implementation.

    The implementations are looked for among the first `WINDOW` (or `limit`) hits. A declaration below the page
    is left alone: folding it would change no rank of the page (the first `limit` hits are those a longer
    page starts with), and it would cost a store call. `exact`: ids of the structural indexes' matches, which
    keep their places. At most one store call (`undecided`), only when the hits hold a pair that the type
    chunks among them do not settle: the implementing types' own declarations, one level up (a type that
    inherits the declaration through an indexed type that is no candidate is not folded).
    """
    if not enabled(SIGNAL):
        return list(hits)
    head, tail = list(hits[: max(WINDOW, limit)]), list(hits[max(WINDOW, limit) :])
    chunks = [h.chunk for h in head]
    pairs = candidate_pairs(chunks, {p for p, h in enumerate(head) if h.id in exact}, within=limit)
    if not pairs:
        return list(hits)
    parents = known_parents(chunks)
    if asked := undecided(chunks, pairs, parents):
        declared = await reader.hierarchy(access, filters.repo).types(any_of("qualified_name", sorted(asked)))
        parents = {**known_parents(declared), **parents}
    order, declaration = folded(len(head), confirmed(chunks, pairs, parents), single_only=SINGLE_ONLY)
    shown = [
        dataclasses.replace(head[p], declaration=head[declaration[p]]) if p in declaration else head[p] for p in order
    ]
    return shown + tail
