"""Ask every question of the suite: search and the exact tools for single answers, the structural
tools for sets, each scored against what `gold.py` computed from the source."""

from __future__ import annotations

from collections.abc import Iterable

from app.auth.access import LOCAL
from app.search.service import Hit, SearchService
from mcp_server.render import render_hits
from pipeline.model import TYPE_SYMBOLS
from tests.quality.real.gold import Corpus, simple_type
from tests.quality.real.questions import SetQuestion, Single
from tests.quality.real.scoring import DEPTH, SetOutcome, SingleOutcome


def expected_of(question: Single, corpus: Corpus) -> frozenset[str]:
    """The written answers, or for symbol and route questions those gold.py derives from the source."""
    if question.expected:
        return question.expected
    if question.kind == "symbol":
        suffix = "." + question.lookup
        names = {t.qualified_name for t in corpus.in_repo(question.repo)}
        names |= {m.qualified_name for t in corpus.in_repo(question.repo) for m in t.members}
        return frozenset(n for n in names if n.endswith(suffix))
    verb, path = question.lookup.split()
    return frozenset(corpus.handlers(verb, path, question.repo))


async def ask_single(search: SearchService, question: Single, corpus: Corpus) -> SingleOutcome:
    hits = await search.search(LOCAL, question.text, question.filters, limit=DEPTH)
    rendered = render_hits(hits, header=f"Results for {question.text!r}:")
    tool: list[Hit] = []
    if question.kind == "symbol":
        tool = await search.symbol(LOCAL, question.lookup, question.repo)
    elif question.kind == "route":
        verb, path = question.lookup.split()
        tool = await search.endpoint(LOCAL, path, verb, question.repo)
    return SingleOutcome(
        question=question,
        expected=expected_of(question, corpus),
        returned=tuple(h.qualified_name for h in hits),
        tool=tuple(h.qualified_name for h in tool),
        rendered_chars=len(rendered.text),
        rendered_lines=rendered.text.count("\n") + 1,
        rendered_count=len(rendered.items),
    )


def gold_of(question: SetQuestion, corpus: Corpus) -> frozenset[str]:
    repo = question.repo
    match question.kind:
        case "annotation":
            return frozenset(corpus.annotated(question.target, repo))
        case "injection":
            return frozenset(corpus.injectors(question.target, repo))
        case "inverse":
            return frozenset(corpus.dependencies(question.target))
        case "callers":
            owner, method = question.target.rsplit(".", 1)
            return frozenset(corpus.callers(owner, method, repo))
        case "endpoints":
            return frozenset(corpus.handlers(question.http_method, question.target, repo))


def _owner(hit: Hit) -> str:
    """A type chunk names itself; a constructor, setter or @Bean method names the type it belongs to."""
    return hit.qualified_name if hit.symbol_type in TYPE_SYMBOLS else hit.chunk.enclosing_type or hit.qualified_name


async def ask_set(search: SearchService, question: SetQuestion) -> frozenset[str]:
    repo = question.repo
    match question.kind:
        case "annotation":
            return frozenset(h.qualified_name for h in await search.by_annotation(LOCAL, question.target, repo))
        case "injection":
            return frozenset(_owner(h) for h in await search.injectors(LOCAL, question.target, repo))
        case "inverse":
            hits = await search.symbol(LOCAL, question.target, repo)
            return frozenset(simple_type(t) for h in hits if h.symbol_type in TYPE_SYMBOLS for t in h.chunk.injects)
        case "callers":
            return frozenset(h.qualified_name for h in await search.callers(LOCAL, question.target, repo))
        case "endpoints":
            hits = await search.endpoint(LOCAL, question.target, question.http_method, repo)
            return frozenset(h.qualified_name for h in hits)


async def evaluate(
    search: SearchService, corpus: Corpus, singles: Iterable[Single], sets: Iterable[SetQuestion]
) -> tuple[list[SingleOutcome], list[SetOutcome]]:
    single_outcomes = [await ask_single(search, q, corpus) for q in singles]
    set_outcomes = [SetOutcome(question=q, gold=gold_of(q, corpus), got=await ask_set(search, q)) for q in sets]
    return single_outcomes, set_outcomes
