"""Pure parts of search: which identifiers and routes a question names, and the rerank they drive.

Fusion (RRF of the dense and lexical candidates) happens inside Qdrant. This light rerank then moves
candidates that the question names exactly to the front: a qualified or simple name, a type name,
or an HTTP route that serves a path in the question. Within one tier, fused order is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.routes import route_matches

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(\))?")
_ROUTE = re.compile(r"(?<![\w.])/[\w{}$.~:-]*(?:/[\w{}$.~:-]*)*")


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """Identifiers that look like code (camelCase, PascalCase, dotted, snake, `x()`) and routes."""

    identifiers: tuple[str, ...]
    routes: tuple[str, ...]


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
    return QueryTerms(identifiers=tuple(dict.fromkeys(idents)), routes=routes)


def _looks_like_code(word: str, *, sentence_start: bool) -> bool:
    if "." in word or "_" in word or any(c.isupper() for c in word[1:]):
        return True  # dotted, snake_case, camelCase or PascalCase with several words
    return word[:1].isupper() and len(word) > 2 and not word.isupper() and not sentence_start


def name_tier(terms: QueryTerms, payload: Mapping[str, Any]) -> int:
    """2 when the question names this symbol or its route, 1 when it names its type, else 0."""
    qualified = str(payload.get("qualified_name", ""))
    name = str(payload.get("name", ""))
    enclosing = str(payload.get("enclosing_type") or "")
    for ident in terms.identifiers:
        if ident in (qualified, name) or qualified.endswith("." + ident):
            return 2
    paths: Sequence[str] = payload.get("http_path") or ()
    if any(route_matches(pattern, route) for route in terms.routes for pattern in paths):
        return 2
    for ident in terms.identifiers:
        if enclosing and (enclosing == ident or enclosing.endswith("." + ident)):
            return 1
    return 0


def rerank(terms: QueryTerms, payloads: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indexes of `payloads` in reranked order: higher tier first, fused order within a tier."""
    if not terms.identifiers and not terms.routes:
        return list(range(len(payloads)))
    tiers = [name_tier(terms, p) for p in payloads]
    return sorted(range(len(payloads)), key=lambda i: -tiers[i])
