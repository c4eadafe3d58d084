"""Split a method that is over the token budget into parts at statement boundaries (cAST).

The method's body is descended recursively: a statement that fits the budget is a unit that is
never cut; one that does not fit is opened up into its children, and a statement with no children
to open is cut between lines as the last resort. Cut points are the start lines of units; parts are
then packed greedily, which merges small adjacent siblings (Zhang et al., cAST, 2025). Every line of
the method belongs to exactly one part, so the parts' line spans tile the method.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import NamedTuple

from pipeline.syntax import Span

_Tokens = Callable[[int, int], int]  # (first_row, last_row) -> estimated tokens


def estimate_tokens(code: str) -> int:
    """Rough BPE token count of Java code: about one token per three non-blank characters."""
    blank = code.count(" ") + code.count("\n") + code.count("\t") + code.count("\r")
    return (len(code) - blank + 2) // 3


class LineSpan(NamedTuple):
    """Zero-based, inclusive row range of one part.

    A named tuple, not a frozen dataclass: one or two are made per method, and a frozen dataclass
    sets each field through `object.__setattr__` (twice the cost).
    """

    first: int
    last: int


def split_rows(
    span: LineSpan, body: Span, children: Callable[[Span], Sequence[Span]], lines: list[str], budget: int
) -> list[LineSpan]:
    """Line spans of the parts of a declaration whose text is over `budget` tokens.

    Args:
        span: the rows of the whole declaration (with its javadoc); the parts tile them.
        body: its body block, whose statements give the cut points.
        children: the named children of a node of the tree.
        lines: the file's lines (rows index into it).
        budget: the token budget per part.
    """
    first, last = span.first, span.last
    cost = [0, *accumulate(estimate_tokens(lines[r]) for r in range(first, last + 1))]

    def tokens(a: int, b: int) -> int:  # rows a..b inclusive, absolute
        return cost[b - first + 1] - cost[a - first]

    cuts: set[int] = set()
    _collect_cuts(children(body), children, tokens, budget, cuts)
    return _pack(first, last, sorted(c for c in cuts if first < c <= last), tokens, budget)


def _collect_cuts(
    nodes: Sequence[Span], children: Callable[[Span], Sequence[Span]], tokens: _Tokens, budget: int, cuts: set[int]
) -> None:
    # Iterative, not recursive: a 500-term string concatenation nests 500 deep.
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        start, end = node.start_row, node.end_row
        cuts.add(start)
        if start == end or tokens(start, end) <= budget:
            continue
        inner = children(node)
        if inner:
            stack.extend(reversed(inner))
            cuts.add(end)  # the closing line of a block may start the next part
        else:
            cuts.update(range(start + 1, end + 1))  # one token over budget alone: cut between lines


def _pack(first: int, last: int, cuts: list[int], tokens: _Tokens, budget: int) -> list[LineSpan]:
    """Greedy packing: extend a part up to the last cut that keeps it within budget."""
    spans: list[LineSpan] = []
    start = first
    fitting: int | None = None  # the furthest cut so far that keeps [start, cut) within budget
    for cut in [*cuts, last + 1]:
        if tokens(start, cut - 1) <= budget:
            fitting = cut
            continue
        end = fitting if fitting is not None and fitting > start else cut
        if end <= last:
            spans.append(LineSpan(start, end - 1))
            start = end
        fitting = cut if cut > start and tokens(start, cut - 1) <= budget else None
        if fitting is None and start < cut <= last:
            spans.append(LineSpan(start, cut - 1))  # a unit alone over budget stays whole
            start = cut
    spans.append(LineSpan(start, last))
    return spans
