"""Retrieval quality: run written questions through the hybrid search and score the ranks.

Only `SearchService.search(text, filters, limit=10)` is asked, the call an agent makes first; the
exact lookup tools (`symbol`, `callers`, `endpoint`, ...) are deliberately left out, as the point is
how far plain search gets before an agent needs them.

Metrics, per kind and overall (overall is over all questions, not a mean of the kinds):
    Recall@k: the share of questions with at least one acceptable answer among the first k results.
        A question lists every chunk an asker would accept, so one hit answers it.
    MRR: the mean of 1/rank of the first acceptable answer within the first `DEPTH` results, 0 when
        there is none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.auth.access import LOCAL
from app.search.scoping import Filters
from app.search.service import SearchService
from tests.quality.questions import KINDS, Kind, Question

DEPTH = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What the search returned for one question."""

    question: Question
    returned: tuple[str, ...]  # qualified names, best first

    @property
    def rank(self) -> int | None:
        """1-based rank of the first acceptable answer within `DEPTH`, or None."""
        for index, name in enumerate(self.returned[:DEPTH], start=1):
            if name in self.question.expected:
                return index
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Metrics:
    """Scores of a group of questions."""

    count: int
    recall_at_1: float
    recall_at_5: float
    mrr: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """Every outcome, and the metrics per kind and over all questions."""

    outcomes: tuple[Outcome, ...]
    by_kind: Mapping[Kind, Metrics]
    overall: Metrics

    @property
    def misses(self) -> tuple[Outcome, ...]:
        """Outcomes whose first result is not an acceptable answer."""
        return tuple(o for o in self.outcomes if o.rank != 1)


async def evaluate(search: SearchService, questions: Iterable[Question]) -> Report:
    """Ask every question with `search.search(text, filters, limit=DEPTH)` and score the answers."""
    outcomes: list[Outcome] = []
    for question in questions:
        hits = await search.search(LOCAL, question.text, question.filters or Filters(), limit=DEPTH)
        outcomes.append(Outcome(question=question, returned=tuple(h.qualified_name for h in hits)))
    return build_report(outcomes)


def build_report(outcomes: Sequence[Outcome]) -> Report:
    """Group outcomes by kind and compute the metrics."""
    by_kind = {kind: score([o for o in outcomes if o.question.kind == kind]) for kind in KINDS}
    return Report(
        outcomes=tuple(outcomes),
        by_kind={kind: metrics for kind, metrics in by_kind.items() if metrics.count},
        overall=score(outcomes),
    )


def score(outcomes: Sequence[Outcome]) -> Metrics:
    """Recall@1, Recall@5 and MRR of some outcomes (all 0 when there are none)."""
    count = len(outcomes)
    if not count:
        return Metrics(count=0, recall_at_1=0.0, recall_at_5=0.0, mrr=0.0)
    ranks = [o.rank for o in outcomes]
    return Metrics(
        count=count,
        recall_at_1=sum(1 for r in ranks if r == 1) / count,
        recall_at_5=sum(1 for r in ranks if r is not None and r <= 5) / count,
        mrr=sum(1.0 / r for r in ranks if r is not None) / count,
    )


def format_report(report: Report, *, title: str = "", misses: bool = True) -> str:
    """A fixed-width table of the metrics, then (unless `misses=False`) each question not answered at rank 1."""
    lines = [title] if title else []
    lines.append(f"{'kind':<12}{'n':>4}{'R@1':>7}{'R@5':>7}{'MRR':>7}")
    rows = [*report.by_kind.items(), ("overall", report.overall)]
    lines.extend(f"{kind:<12}{m.count:>4}{m.recall_at_1:>7.2f}{m.recall_at_5:>7.2f}{m.mrr:>7.2f}" for kind, m in rows)
    if misses and report.misses:
        lines.append("")
        lines.append("not answered at rank 1 (rank of the first acceptable answer; top 3 returned):")
        lines.extend(_miss_line(o) for o in report.misses)
    return "\n".join(lines)


def _miss_line(outcome: Outcome) -> str:
    rank = str(outcome.rank) if outcome.rank is not None else "-"
    top = ", ".join(short_name(n) for n in outcome.returned[:3]) or "(nothing)"
    return f"  {rank:>2} [{outcome.question.kind}] {outcome.question.text!r} -> {top}"


def short_name(qualified_name: str) -> str:
    """`com.acme.shop.core.service.OwnerService.find` -> `OwnerService.find` (the package is dropped)."""
    parts = qualified_name.split(".")
    for index, part in enumerate(parts):
        if part[:1].isupper():
            return ".".join(parts[index:])
    return qualified_name
