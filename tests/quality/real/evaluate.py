"""Ask every question of the suite: search and the exact tools for single answers, the structural
tools for sets, each scored against what `gold.py` computed from the source."""

from __future__ import annotations

from collections.abc import Iterable

from fastmcp.tools import ToolResult
from mcp.types import TextContent

from app.auth.access import LOCAL
from app.search import scoping
from app.search.hits import Hit
from app.search.service import SearchService
from mcp_server.render import render_hits
from mcp_server.server import KnowledgeTools
from mcp_server.tool_params import Where
from pipeline.model import TYPE_SYMBOLS
from tests.quality.real.corpus import Indexed
from tests.quality.real.gold import Corpus, simple_type
from tests.quality.real.questions import SetQuestion, Single
from tests.quality.real.scoring import DEPTH, AgentView, SetOutcome, SingleOutcome, named_in


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


def applicable(question: Single | SetQuestion, corpus: Corpus) -> bool:
    """Whether the loaded repositories hold the answer (all do unless `--repos` picked some)."""
    if isinstance(question, SetQuestion):
        return question.repo in corpus.repos()
    names = corpus.names()
    return any(name in names for name in expected_of(question, corpus))


def problem(question: Single | SetQuestion, corpus: Corpus) -> str | None:
    """Why a question cannot be scored fairly, or None: an expected name not declared in the source (a
    typo would silently lower the scores), no expected answer, or an empty gold set (recall undefined)."""
    if isinstance(question, SetQuestion):
        written = question.gold if question.kind != "inverse" else frozenset()  # inverse: simple type names
        if undeclared := sorted(written - corpus.names()):
            return f"{', '.join(undeclared)} not declared"
        return None if gold_of(question, corpus) else "the gold set is empty"
    undeclared = sorted(question.expected - corpus.names())
    if undeclared:
        return f"{', '.join(undeclared)} not declared"
    return None if expected_of(question, corpus) else "no expected answer"


async def ask_single(search: SearchService, question: Single, corpus: Corpus) -> SingleOutcome:
    hits = await search.search(LOCAL, question.text, question.filters, limit=DEPTH)
    rendered = render_hits(hits, header=f"Results for {question.text!r}:")
    tool: list[Hit] = []
    if question.kind == "symbol":
        tool = await search.symbol(LOCAL, question.lookup, scoping.Where(repo=question.repo))
    elif question.kind == "route":
        verb, path = question.lookup.split()
        tool = await search.endpoint(LOCAL, path, verb, scoping.Where(repo=question.repo))
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
    if question.gold:
        return question.gold
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
    where = scoping.Where(repo=question.repo)
    match question.kind:
        case "annotation":
            return frozenset(h.qualified_name for h in await search.by_annotation(LOCAL, question.target, where))
        case "injection":
            return frozenset(_owner(h) for h in await search.injectors(LOCAL, question.target, where))
        case "inverse":
            hits = await search.symbol(LOCAL, question.target, where)
            return frozenset(simple_type(t) for h in hits if h.symbol_type in TYPE_SYMBOLS for t in h.chunk.injects)
        case "callers":
            return frozenset(h.qualified_name for h in await search.callers(LOCAL, question.target, where))
        case "endpoints":
            hits = await search.endpoint(LOCAL, question.target, question.http_method, where)
            return frozenset(h.qualified_name for h in hits)


async def agent_view(tools: KnowledgeTools, question: SetQuestion, gold: frozenset[str]) -> AgentView:
    """What the MCP tool an agent would call shows at its default budget, and how much of the gold is in it."""
    where = Where(repo=question.repo)
    match question.kind:
        case "annotation":
            result = await tools.find_by_annotation(annotation=question.target, where=where)
        case "callers":
            result = await tools.get_callers(name=question.target, where=where)
        case "injection":
            result = await tools.find_injections(type=question.target, where=where)
        case "inverse":
            result = await tools.find_injections(type=question.target, where=where)
        case "endpoints":
            result = await tools.find_endpoint(path=question.target, http_method=question.http_method, where=where)
    text = _text_of(result)
    return AgentView(chars=len(text), lines=text.count("\n") + 1, shown=named_in(text, gold))


def _text_of(result: ToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def evaluate(
    indexed: Indexed, corpus: Corpus, singles: Iterable[Single], sets: Iterable[SetQuestion]
) -> tuple[list[SingleOutcome], list[SetOutcome]]:
    search = indexed.search
    tools = KnowledgeTools(lambda: indexed.deps, authenticated=False, unauthenticated=LOCAL)
    single_outcomes = [await ask_single(search, q, corpus) for q in singles]
    set_outcomes = []
    for q in sets:
        gold = gold_of(q, corpus)
        view = await agent_view(tools, q, gold)
        set_outcomes.append(SetOutcome(question=q, gold=gold, got=await ask_set(search, q), view=view))
    return single_outcomes, set_outcomes
