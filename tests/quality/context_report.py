"""Measure `auto_context` (issue 16): the relevance threshold, then how often the right chunk is injected.

    .venv/bin/python -m tests.quality.context_report

1. Threshold. Every prompt of three sets is asked with no threshold a search hit could pass
   (`threshold=inf`), which leaves its best search hit's relevance (`Context.relevance`) and whether it
   names a symbol or route found exactly (those are chosen whatever the threshold). The sets: the 64
   quality questions and the 12 written tasks (`tasks.TASKS`), which should get context, and the 24
   prompts about nothing in this code (`tasks.IRRELEVANT`), which should not. For each threshold of a
   grid, the share of each set that would get context; the threshold kept is the lowest at which no
   irrelevant prompt gets any (`pick`), which also keeps the most relevant prompts.
2. Quality at `app.search.context.MIN_RELEVANCE` and the default budget: the share of relevant prompts
   whose context holds an acceptable chunk (one of `Question.expected`) as a piece, the share that get
   any context, and the characters injected (mean, median, 95th percentile, most), in both search modes.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from app.auth.access import LOCAL
from app.search.context import DEFAULT_MAX_CHARS, MIN_RELEVANCE, Context, Role, auto_context
from app.search.service import SearchService
from tests.quality.corpus import MODES, Mode, indexed_search
from tests.quality.questions import QUESTIONS, Question
from tests.quality.tasks import IRRELEVANT, TASKS

GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))
RELEVANT: Sequence[Question] = QUESTIONS + TASKS


@dataclass(frozen=True, slots=True, kw_only=True)
class Signal:
    """What decides whether a prompt gets context: its best search hit's relevance, and exact names found."""

    text: str
    relevance: float
    named: bool

    def passes(self, threshold: float) -> bool:
        """Whether the prompt gets context at this threshold."""
        return self.named or self.relevance >= threshold


@dataclass(frozen=True, slots=True, kw_only=True)
class Quality:
    """`auto_context` on a set of prompts at one threshold and budget."""

    count: int
    found: float  # an acceptable chunk is a piece
    any_context: float
    chars: tuple[int, ...]  # of the prompts that got context


async def signal(search: SearchService, text: str) -> Signal:
    """A prompt's best search relevance and whether it names something found exactly."""
    context = await auto_context(search, LOCAL, text, threshold=math.inf)
    return Signal(text=text, relevance=context.relevance, named=any(p.role is Role.NAMED for p in context.pieces))


def pick(relevant: Sequence[Signal], irrelevant: Sequence[Signal]) -> float:
    """The lowest grid threshold at which no irrelevant prompt gets context by relevance (named ones excepted)."""
    for threshold in GRID:
        if not any(s.relevance >= threshold for s in irrelevant):
            return threshold
    return GRID[-1]


async def quality(search: SearchService, questions: Sequence[Question], max_chars: int) -> Quality:
    """Ask `auto_context` every question; count acceptable pieces and the characters injected."""
    found = got = 0
    chars: list[int] = []
    for question in questions:
        context = await auto_context(search, LOCAL, question.text, max_chars=max_chars)
        if not context.empty:
            got += 1
            chars.append(len(context.text))
        found += _holds(context, question)
    n = len(questions)
    return Quality(count=n, found=found / n, any_context=got / n, chars=tuple(chars))


def _holds(context: Context, question: Question) -> bool:
    return any(p.hit.qualified_name in question.expected for p in context.pieces)


def _share(signals: Sequence[Signal], threshold: float) -> float:
    return sum(s.passes(threshold) for s in signals) / len(signals)


def threshold_table(relevant: Sequence[Signal], irrelevant: Sequence[Signal]) -> list[str]:
    """The share of each set that gets context at every threshold of the grid."""
    lines = [f"{'threshold':>9} {'relevant':>9} {'irrelevant':>11}"]
    lines += [f"{t:>9.2f} {_share(relevant, t):>9.2f} {_share(irrelevant, t):>11.2f}" for t in GRID]
    return lines


def quality_line(name: str, q: Quality) -> str:
    """One row of the quality table."""
    c = sorted(q.chars) or [0]
    p95 = c[min(len(c) - 1, math.ceil(0.95 * len(c)) - 1)]
    return (
        f"{name:<22}{q.count:>4}{q.found:>8.2f}{q.any_context:>9.2f}"
        f"{statistics.fmean(c):>8.0f}{statistics.median(c):>8.0f}{p95:>7}{c[-1]:>7}"
    )


async def report(mode: Mode, max_chars: int) -> str:
    """Both measurements in one search mode."""
    async with indexed_search(mode) as search:
        relevant = [await signal(search, q.text) for q in RELEVANT]
        irrelevant = [await signal(search, text) for text in IRRELEVANT]
        kept = pick(relevant, irrelevant)
        worst = max(irrelevant, key=lambda s: s.relevance)
        lines = [f"== {mode}: relevance of the best search hit (named prompts get context at any threshold)"]
        lines += threshold_table(relevant, irrelevant)
        lines.append(f"lowest threshold with no irrelevant prompt: {kept:.2f}")
        lines.append(f"highest irrelevant relevance: {worst.relevance:.2f} ({worst.text!r})")
        named = [s.text for s in irrelevant if s.named]
        lines.append(f"irrelevant prompts naming an indexed symbol: {named or 'none'}")
        lines.append("")
        lines.append(f"== {mode}: auto_context at threshold {MIN_RELEVANCE:.2f}, max_chars {max_chars}")
        lines.append(f"{'prompts':<22}{'n':>4}{'found':>8}{'context':>9}{'mean':>8}{'median':>8}{'p95':>7}{'max':>7}")
        lines.append(quality_line("quality questions", await quality(search, QUESTIONS, max_chars)))
        lines.append(quality_line("tasks", await quality(search, TASKS, max_chars)))
        irrelevant_q = [Question(t, "natural", frozenset({"-"})) for t in IRRELEVANT]
        lines.append(quality_line("irrelevant", await quality(search, irrelevant_q, max_chars)))
        return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.quality.context_report", description=__doc__)
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    args = parser.parse_args(argv)
    for index, mode in enumerate(MODES):
        print(("\n" if index else "") + asyncio.run(report(mode, args.max_chars)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
