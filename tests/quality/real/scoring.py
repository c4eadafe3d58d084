"""Scores of the real-repository suite: ranks for single answers, set-recall/precision for sets.

Single answers (per kind and overall): R@1, R@5 and MRR over the first `DEPTH` results, as in the
fixture suite (tests/quality/harness.py). Sets: per question, recall = |got ∩ gold| / |gold| and
precision = |got ∩ gold| / |got| (1.0 when nothing was returned and nothing was expected); a kind's
figure is the mean over its questions.

"What an agent reads": for a semantic_search answer rendered by `mcp_server.render.render_hits` at
the default budget, its size in characters and lines, and whether the first right answer was among
the results the budget let in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean

from tests.quality.real.questions import SET_KINDS, SINGLE_KINDS, SetQuestion, Single

DEPTH = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class SingleOutcome:
    question: Single
    expected: frozenset[str]
    returned: tuple[str, ...]  # search results, best first
    tool: tuple[str, ...] = ()  # the exact tool's results (symbol / endpoint), in its order
    rendered_chars: int = 0
    rendered_lines: int = 0
    rendered_count: int = 0  # results the budget let in

    @property
    def rank(self) -> int | None:
        return first_rank(self.returned[:DEPTH], self.expected)

    @property
    def tool_rank(self) -> int | None:
        return first_rank(self.tool, self.expected)

    @property
    def read_rank(self) -> int | None:
        """Rank of the first right answer within what the rendered text shows, or None."""
        return first_rank(self.returned[: self.rendered_count], self.expected)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentView:
    """The MCP tool's text at its default budget: size, and the share of the gold set named in it."""

    chars: int
    lines: int
    shown: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SetOutcome:
    question: SetQuestion
    gold: frozenset[str]
    got: frozenset[str]
    view: AgentView = AgentView(chars=0, lines=0, shown=0.0)

    @property
    def recall(self) -> float:
        return len(self.got & self.gold) / len(self.gold) if self.gold else float(not self.got)

    @property
    def precision(self) -> float:
        return len(self.got & self.gold) / len(self.got) if self.got else float(not self.gold)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranks:
    count: int
    recall_at_1: float
    recall_at_5: float
    mrr: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SetScore:
    count: int
    recall: float
    precision: float


def named_in(text: str, names: frozenset[str]) -> float:
    """The share of `names` written in `text` as whole names (`a.B.m` is not found in `a.B.mm` or `x.a.B.m`)."""
    if not names:
        return 1.0
    return sum(1 for name in names if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text)) / len(names)


def first_rank(returned: Sequence[str], expected: frozenset[str]) -> int | None:
    return next((i for i, name in enumerate(returned, 1) if name in expected), None)


def ranks(values: Sequence[int | None]) -> Ranks:
    n = len(values)
    if not n:
        return Ranks(count=0, recall_at_1=0.0, recall_at_5=0.0, mrr=0.0)
    return Ranks(
        count=n,
        recall_at_1=sum(1 for r in values if r == 1) / n,
        recall_at_5=sum(1 for r in values if r is not None and r <= 5) / n,
        mrr=sum(1.0 / r for r in values if r is not None) / n,
    )


def set_score(outcomes: Sequence[SetOutcome]) -> SetScore:
    if not outcomes:
        return SetScore(count=0, recall=0.0, precision=0.0)
    return SetScore(
        count=len(outcomes),
        recall=mean(o.recall for o in outcomes),
        precision=mean(o.precision for o in outcomes),
    )


def single_table(
    outcomes: Sequence[SingleOutcome], tags: Sequence[str] = ("vocab", "zh", "bodiless", "phrased")
) -> list[str]:
    """Rows per kind, per tag (natural questions' tags; `phrased` routes), overall; then the exact tools' ranks."""
    lines = [f"{'single':<16}{'n':>4}{'R@1':>7}{'R@5':>7}{'MRR':>7}   {'read: chars':>11}{'lines':>7}{'shown':>7}"]
    groups: list[tuple[str, list[SingleOutcome]]] = [
        (k, [o for o in outcomes if o.question.kind == k]) for k in SINGLE_KINDS
    ]
    groups += [(f"{kind}/{t}", group) for t in tags for kind, group in _tagged(outcomes, t).items()]
    groups.append(("overall", list(outcomes)))
    for name, group in groups:
        if not group:
            continue
        m = ranks([o.rank for o in group])
        chars = mean(o.rendered_chars for o in group)
        lines_ = mean(o.rendered_lines for o in group)
        shown = sum(1 for o in group if o.read_rank is not None) / len(group)
        scores = f"{m.count:>4}{m.recall_at_1:>7.2f}{m.recall_at_5:>7.2f}{m.mrr:>7.2f}"
        lines.append(f"{name:<16}{scores}   {chars:>11.0f}{lines_:>7.0f}{shown:>7.2f}")
    for kind, tool in (("symbol", "symbol"), ("route", "endpoint")):
        group = [o for o in outcomes if o.question.kind == kind]
        if group:
            m = ranks([o.tool_rank for o in group])
            lines.append(f"{'tool ' + tool:<16}{m.count:>4}{m.recall_at_1:>7.2f}{m.recall_at_5:>7.2f}{m.mrr:>7.2f}")
    return lines


def _tagged(outcomes: Sequence[SingleOutcome], tag: str) -> dict[str, list[SingleOutcome]]:
    """The outcomes carrying `tag`, by kind."""
    out: dict[str, list[SingleOutcome]] = {}
    for o in outcomes:
        if tag in o.question.tags:
            out.setdefault(o.question.kind, []).append(o)
    return out


def set_table(outcomes: Sequence[SetOutcome]) -> list[str]:
    """Rows per kind and overall; "read" is the MCP tool's text (mean characters, lines, share of gold named)."""
    lines = [f"{'sets':<16}{'n':>4}{'recall':>8}{'prec':>7}   {'read: chars':>11}{'lines':>7}{'shown':>7}"]
    for kind in (*SET_KINDS, "overall"):
        group = [o for o in outcomes if kind in ("overall", o.question.kind)]
        if group:
            s = set_score(group)
            chars = mean(o.view.chars for o in group)
            lines_ = mean(o.view.lines for o in group)
            shown = mean(o.view.shown for o in group)
            read = f"{chars:>11.0f}{lines_:>7.0f}{shown:>7.2f}"
            lines.append(f"{kind:<16}{s.count:>4}{s.recall:>8.2f}{s.precision:>7.2f}   {read}")
    return lines
