"""The candidate pool and its fusion: the engine's fused candidates, the exact matches a question names, reranked.

The structural lookups (the routes and symbols a question names, a relation's answers) need neither
the question's vectors nor its candidates: they run while the embedding endpoint and the engine's
searches do. The pool is reranked (`app.search.ranking`), optionally re-scored by a cross-encoder,
generated code demoted (`GeneratedCode`), and a bodiless declaration folded into its implementation
(`app.search.fold`). The pure stretches that take milliseconds (decoding the candidates, the rerank) run
through the reader's `offload`; the question's vector and the final sort, a fraction of a hand-over to a
thread and back, run in place (docs/decisions.md, "Fewer hand-overs in a search").
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from app.auth.access import Access
from app.core.settings import GeneratedCode
from app.search import boosts, fold, intent, lookups
from app.search.crossencoder import CrossEncoder
from app.search.endpoints import with_composed_routes
from app.search.hits import Hit, hit_text
from app.search.question import SCAFFOLDING, QueryTerms, Question, Relation
from app.search.ranking import Evidence, names_symbol, rerank, serves, spells
from app.search.reader import Reader
from app.search.scoping import Filters, passes
from app.search.synonyms import synonyms
from app.store.embeddings import Embedder
from app.store.engines import Scored
from app.store.filters import Condition, any_of, either
from app.store.lexical import query_vector
from app.store.payloads import read_fields
from app.store.routes import query_keys, route_matches, specificity
from pipeline.model import TYPE_SYMBOLS, Chunk

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
MAX_NAMED = 8  # names and routes of one question looked up exactly
MAX_SUBJECTS = 2  # subjects of one relation question looked up
MAX_EXACT = 256  # exact matches a question adds to the pool at most
NAME_FIELDS = ("qualified_name", "name")  # what tells whether a symbol is the one a question names


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rankers:
    """What scores a search besides the store: the embedder, the cross-encoder and the generated-code policy."""

    embedder: Embedder | None
    cross_encoder: CrossEncoder | None
    generated_code: GeneratedCode
    dense_weight: float = 1.0


async def ranked(
    reader: Reader, access: Access, question: Question, filters: Filters, limit: int, rankers: Rankers
) -> list[Hit]:
    """Hybrid search: the fused candidates and the exact matches, reranked, re-scored, generated code demoted."""
    if rankers.generated_code is GeneratedCode.EXCLUDE and filters.generated is None:
        filters = dataclasses.replace(filters, generated=False)
    terms = question.terms
    # The structural lookups need neither the query's vectors nor its candidates: they run while the embedding
    # endpoint and the engine's searches do (the store's calls release the GIL: docs/decisions.md).
    fused, named, answers = await _together(
        candidates(reader, access, question, filters, max(limit * 4, boosts.DEPTH), rankers),
        named_matches(reader, access, terms, filters),
        relation_answers(reader, access, terms, filters),
    )
    decoded = await reader.offload(lambda: [reader.hit(p.id, p.score, p.payload) for p in fused])
    hits = await with_composed_routes(reader, access, decoded)
    order = await reader.offload(lambda: _reranked(terms, hits, *named, answers))
    if rankers.cross_encoder is not None:
        order = await rankers.cross_encoder.reordered(question.text, order, hit_text)
    order = demoted(order, terms.identifiers, rankers.generated_code)  # a sort of the pool: cheaper than a hop
    exact = {h.id for found in (*named, answers) for h in found}
    return (await fold.folded_hits(reader, access, filters, order, exact, limit))[:limit]


def demoted(ranked: list[Hit], named: Sequence[str], generated_code: GeneratedCode) -> list[Hit]:
    """Generated hits after every hand-written one, each group in rank order (`generated_code=demote`).

    A generated symbol the question names (`PmsProductMapper`, `CmsHelpExample.or`) is what was
    asked for: it keeps its rank.
    """
    if generated_code is not GeneratedCode.DEMOTE:
        return ranked
    return sorted(ranked, key=lambda h: h.chunk.generated and not any(names_symbol(i, h.chunk) for i in named))


async def candidates(
    reader: Reader, access: Access, question: Question, filters: Filters, limit: int, rankers: Rankers
) -> list[Scored]:
    """The engine's fused candidates for the question's lexical and dense vectors (none without either)."""
    terms, query = question.terms, question.text
    related = {**synonyms(sorted(terms.words - SCAFFOLDING)), **boosts.compounds(question)}
    sparse = query_vector(question.lexical, related)  # in place, as the question's parse (`SearchService`)
    lexical = sparse if sparse.indices else None
    embedder = rankers.embedder
    dense = await embedder.embed_query(query) if embedder is not None and query.strip() else None
    if lexical is None and dense is None:
        return []
    where = await reader.where(access, filters)
    weight = intent.dense_weight(terms, rankers.dense_weight)  # the question's lean (`app.search.intent`)
    return await reader.store.query(lexical=lexical, dense=dense, where=where, limit=limit, dense_weight=weight)


async def named_matches(
    reader: Reader, access: Access, terms: QueryTerms, filters: Filters
) -> tuple[list[Hit], list[Hit]]:
    """Handlers of the question's routes and the symbols it names (not a relation's subject), in one scroll."""
    names = [i for i in terms.identifiers if i not in terms.subjects][:MAX_NAMED]
    routes = terms.routes[:MAX_NAMED]
    named = any_of("name", sorted({n.rsplit(".", 1)[-1] for n in names})) if names else None
    if named is not None and not routes:  # the names' matches' names read first, whole payloads only of those named
        kept = await reader.lookup_kept(access, filters, named, NAME_FIELDS, _naming(names), limit=MAX_EXACT)
        return [], await with_composed_routes(reader, access, kept)
    conditions: list[Condition] = [named] if named is not None else []
    if routes:
        keys = sorted({k for r in routes for k in query_keys(r)})
        conditions += [any_of("http_keys", keys), any_of("mapping_keys", keys)]
    if not conditions:
        return [], []
    found = await with_composed_routes(
        reader, access, await reader.lookup(access, filters, either(*conditions), limit=MAX_EXACT)
    )
    by_route = [h for h in found if any(serves(terms, r, h.chunk) for r in routes)]
    by_name = [h for h in found if any(names_symbol(n, h.chunk) for n in names)]
    return by_route, by_name


def _naming(names: Sequence[str]) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a payload's `NAME_FIELDS` are a symbol one of `names` names (`names_symbol`)."""

    def keep(payload: Mapping[str, Any]) -> bool:
        qualified, name = read_fields(payload, NAME_FIELDS)
        return any(spells(n, qualified, name) for n in names)

    return keep


async def relation_answers(reader: Reader, access: Access, terms: QueryTerms, filters: Filters) -> list[Hit]:
    """The exact answers of a relation question (who calls / injects / implements X, what X calls or receives)."""
    if terms.relation is None:
        return []
    found: dict[str, Hit] = {}
    subjects = terms.subjects[:MAX_SUBJECTS]
    for subject in subjects:
        found.update((h.id, h) for h in await _related(reader, access, terms.relation, subject, filters))
    relation = terms.relation
    return await reader.offload(
        lambda: [h for h in found.values() if passes(h, filters) and not _is_subject(relation, subjects, h.chunk)]
    )


async def _related(reader: Reader, access: Access, relation: Relation, subject: str, filters: Filters) -> list[Hit]:
    # `filters` is where to look (a `Where`); its other filters are applied after (`relation_answers`).
    if relation is Relation.CALLERS:
        return await lookups.callers(reader, access, subject, filters)
    if relation is Relation.INJECTORS:
        return await lookups.injectors(reader, access, subject, filters)
    if relation is Relation.IMPLEMENTATIONS:
        return await lookups.implementations(reader, access, subject, filters)
    repo_wide = filters.in_repo()
    if relation is Relation.CALLEES:
        return [
            target for _, targets in await lookups.callees(reader, access, subject, repo_wide) for target in targets
        ]
    # What the subject receives (learned stereotypes included) or extends: the types it names.
    if relation is Relation.DEPENDENCIES:
        named = {n.rsplit(".", 1)[-1] for n in await lookups.dependencies(reader, access, subject, filters.repo)}
    else:
        named = {
            n.rsplit(".", 1)[-1]
            for hit in await lookups.symbol(reader, access, subject, repo_wide)
            for n in (*hit.chunk.extends, *hit.chunk.implements)
        }
    if not named:
        return []
    hits = await reader.lookup(access, filters, any_of("name", sorted(named)))
    return [h for h in hits if h.symbol_type in TYPE_SYMBOLS]


def _reranked(
    terms: QueryTerms, hits: list[Hit], routes: Sequence[Hit], symbols: Sequence[Hit], answers: Sequence[Hit]
) -> list[Hit]:
    """The fused candidates and the exact matches, in reranked order (pure: run off the event loop)."""
    pool, evidence = _with_exact(terms, hits, routes, symbols, answers)
    return [
        pool[i]
        for i in rerank(terms, [h.chunk for h in pool], evidence, fused=len(hits), scores=[h.score for h in hits])
    ]


def _with_exact(
    terms: QueryTerms, hits: list[Hit], routes: Sequence[Hit], symbols: Sequence[Hit], answers: Sequence[Hit]
) -> tuple[list[Hit], Evidence]:
    """The candidates plus the exact matches of the structural indexes, and where those sit in the pool.

    The matches come from at most one scroll for the routes and symbols the question names (filters and
    access inside the query) and the lookups of one relation, however many names the question holds.
    """
    pool = list(hits)
    position = {h.id: i for i, h in enumerate(pool)}

    def place(found: Sequence[Hit]) -> list[int]:
        for hit in found:
            if hit.id not in position:
                position[hit.id] = len(pool)
                pool.append(hit)
        return sorted(dict.fromkeys(position[h.id] for h in found))

    # Candidates Qdrant ranked keep its order; the others follow in the structural order.
    by_route = place(routes)
    by_route.sort(key=lambda i: (_route_rank(terms, pool[i].chunk), i))
    return pool, Evidence(routes=by_route, symbols=place(symbols), relation=place(answers))


async def _together(first: Awaitable[A], second: Awaitable[B], third: Awaitable[C]) -> tuple[A, B, C]:
    """Three independent reads at once; every one runs to its end, then the first failure (in this order) is raised."""
    done = await asyncio.gather(first, second, third, return_exceptions=True)
    for outcome in done:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(tuple[A, B, C], tuple(done))


def _is_subject(relation: Relation, subjects: Sequence[str], chunk: Chunk) -> bool:
    """Whether a relation answer is the question's subject itself, which is what it asks about, not an answer.

    A caller is, when it calls its own name (recursion, an overload delegating to another); a caller of
    the same name in another type is an answer. For the other relations, a chunk the subject names.
    """
    if relation is Relation.CALLERS:
        own = f"{(chunk.enclosing_type or '').rsplit('.', 1)[-1]}.{chunk.name}"
        return own in chunk.calls or f"{chunk.enclosing_type}.{chunk.name}" in chunk.calls_fq
    return any(names_symbol(s, chunk) for s in subjects)


def _route_rank(terms: QueryTerms, chunk: Chunk) -> tuple[int, int, int]:
    """How specifically the chunk's best pattern matches a route of the question (Spring's order)."""
    matching = [p for p in chunk.http_path for r in terms.routes if route_matches(p, r)]
    return min(map(specificity, matching), default=(1 << 30, 0, 0))
