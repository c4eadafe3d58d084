"""Pure parts of search: what a question names and asks for, and the rerank that follows from it.

Fusion (RRF of the dense and lexical candidates) happens inside Qdrant. This light rerank then moves
candidates to the front in tiers, keeping fused order within a tier:

3. the question asks for a relation (who calls / injects / implements X) and the chunk has it;
2. the chunk is the symbol or route the question names (unless a relation was asked for: then the
   named symbol is the question's subject, not its answer);
1. the chunk's annotation or Spring role is a word of the question ("scheduled jobs", "entities"),
   or its enclosing type is named.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.store.routes import route_matches
from pipeline.model import TYPE_SYMBOLS, Chunk

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(\))?")
_ROUTE = re.compile(r"(?<![\w.])/[\w{}$.~:-]*(?:/[\w{}$.~:-]*)*")


_WORD = re.compile(r"[A-Za-z]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


class Relation(enum.StrEnum):
    """What a relation question asks for: who calls, who injects, or who implements X."""

    CALLERS = "callers"
    INJECTORS = "injectors"
    IMPLEMENTATIONS = "implementations"


_RELATIONS: dict[Relation, frozenset[str]] = {
    Relation.CALLERS: frozenset(
        {"call", "calls", "called", "caller", "callers", "invoke", "invokes", "invoked", "usages"}
    ),
    Relation.INJECTORS: frozenset(
        {
            "inject",
            "injects",
            "injected",
            "injection",
            "depend",
            "depends",
            "dependency",
            "dependencies",
            "autowired",
            "autowires",
            "wired",
            "wires",
        }
    ),
    Relation.IMPLEMENTATIONS: frozenset(
        {"implement", "implements", "implemented", "implementation", "implementations", "subclass", "subclasses"}
    ),
}
# "Who uses X" asks for callers when X is a method and for injectors when X is a type.
_USE_VERBS = frozenset({"use", "uses", "used", "using", "usage", "user", "users"})
_RELATION_VALUES: dict[Relation, Callable[[Chunk], tuple[str, ...]]] = {
    Relation.CALLERS: lambda c: (*c.calls, *c.calls_fq),
    Relation.INJECTORS: lambda c: (*c.injects, *c.injects_fq),
    Relation.IMPLEMENTATIONS: lambda c: (*c.implements, *c.extends, *c.implements_fq, *c.extends_fq),
}
"""What a chunk answers to each relation question: the simple and the fully qualified names."""


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What a question names and asks for.

    Identifiers look like code (camelCase, PascalCase, dotted, snake, `x()`); `relation` is
    `callers`, `injectors` or `implementations` when the question asks for one; `words` are the
    question's words folded to singular lowercase.
    """

    identifiers: tuple[str, ...]
    routes: tuple[str, ...]
    relation: Relation | None = None
    words: frozenset[str] = frozenset()


def query_terms(query: str) -> QueryTerms:
    """Pick the code-like identifiers and the HTTP paths out of a question."""
    routes = tuple(m.group(0) for m in _ROUTE.finditer(query) if len(m.group(0)) > 1)
    idents: list[str] = []
    for match in _IDENTIFIER.finditer(query):
        word = match.group(0)
        called = word.endswith("()")
        word = word.removesuffix("()")
        # A capitalized word that opens the question is more likely English than a class name.
        if called or _looks_like_code(word, sentence_start=match.start() == 0):
            idents.append(word)
    words = [w.lower() for w in _WORD.findall(query)]
    relation = next((name for name, verbs in _RELATIONS.items() if verbs.intersection(words)), None)
    if relation is None and idents and _USE_VERBS.intersection(words):
        relation = Relation.CALLERS if _is_member(idents[0]) else Relation.INJECTORS
    return QueryTerms(
        identifiers=tuple(dict.fromkeys(idents)),
        routes=routes,
        relation=relation if idents else None,
        words=frozenset(singular(w) for w in words),
    )


def _is_member(identifier: str) -> bool:
    """`OwnerService.create` or `findById` name a method; `OwnerService` names a type."""
    last = identifier.rsplit(".", 1)[-1]
    return last[:1].islower()


def expand_query(query: str) -> str:
    """The question plus the singular of its plural words, so "entities" also finds `@Entity`."""
    extra = [singular(w.lower()) for w in _WORD.findall(query)]
    added = [w for w in dict.fromkeys(extra) if w not in query.lower()]
    return f"{query} {' '.join(added)}" if added else query


def singular(word: str) -> str:
    """A rough English singular, enough to match "entities" with `Entity` and "listeners" with `Listener`."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _looks_like_code(word: str, *, sentence_start: bool) -> bool:
    if "." in word or "_" in word or any(c.isupper() for c in word[1:]):
        return True  # dotted, snake_case, camelCase or PascalCase with several words
    return word[:1].isupper() and len(word) > 2 and not word.isupper() and not sentence_start


_MEMBER_WORDS = frozenset({"method", "function", "handler", "endpoint", "constructor"})


def tier(terms: QueryTerms, chunk: Chunk) -> int:
    """The rerank tier of one candidate (see the module docstring)."""
    if _has_relation(terms, chunk):
        return 3
    if not terms.relation and _names_symbol(terms, chunk):
        return 2
    if _names_role(terms, chunk) or _names_enclosing(terms, chunk):
        # "Which methods are audited" asks for members: a type carrying the same words comes after them.
        is_type = chunk.symbol_type in TYPE_SYMBOLS
        return 0 if is_type and _MEMBER_WORDS & terms.words else 1
    return 0


def _names_symbol(terms: QueryTerms, chunk: Chunk) -> bool:
    qualified, name = chunk.qualified_name, chunk.name
    if any(ident in (qualified, name) or qualified.endswith("." + ident) for ident in terms.identifiers):
        return True
    return any(route_matches(pattern, route) for route in terms.routes for pattern in chunk.http_path)


def _has_relation(terms: QueryTerms, chunk: Chunk) -> bool:
    values = _RELATION_VALUES[terms.relation](chunk) if terms.relation else ()
    return any(v == i or v.endswith("." + i) for v in values for i in terms.identifiers)


def _names_role(terms: QueryTerms, chunk: Chunk) -> bool:
    if not terms.words:
        return False
    for label in (*chunk.annotation_names, chunk.stereotype or ""):
        parts = [singular(p.lower()) for p in _CAMEL_PART.findall(label.replace("_", " ").title().replace(" ", ""))]
        if parts and all(any(_same_stem(p, w) for w in terms.words) for p in parts):
            return True
    return False


def _same_stem(part: str, word: str) -> bool:
    """`transactional` ~ `transaction`, `scheduled` ~ `schedule`: equal, or one extends the other by a suffix."""
    if part == word:
        return True
    short, long = sorted((part, word), key=len)
    return len(short) >= 5 and long.startswith(short) and len(long) - len(short) <= 3


def _names_enclosing(terms: QueryTerms, chunk: Chunk) -> bool:
    enclosing = chunk.enclosing_type or ""
    return bool(enclosing) and any(enclosing == i or enclosing.endswith("." + i) for i in terms.identifiers)


def rerank(terms: QueryTerms, chunks: Sequence[Chunk]) -> list[int]:
    """Indexes of `chunks` (as stored) in reranked order: higher tier first, fused order within a tier."""
    tiers = [tier(terms, c) for c in chunks]
    return sorted(range(len(chunks)), key=lambda i: -tiers[i])
