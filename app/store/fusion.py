"""The order of the store's candidates, decided here for every engine: each list's ties, and their fusion.

Qdrant fuses prefetches itself, but each engine orders points tied on a fused score its own way
(qdrant-client's local mode by first appearance, Edge otherwise), and with two lists ties are the
rule, not the exception: the n-th point of one list ties with the n-th of the other. Within one list
the engines also differ: Edge scores in 32-bit floats, local mode in 64-bit, so equal texts (enum
constants with the same body) tie on one and differ in the 8th digit on the other. So each engine
answers each list with a few points to spare, `ranked` puts every list in one order (score to
`SCORE_DIGITS` significant digits, then point id) and `fused` fuses them, once, with one tie order
(docs/decisions.md, "The candidates' order is ours").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar


class Scored(Protocol):
    """A point as an engine answers it: an id and a score (qdrant-client's and Edge's `ScoredPoint`)."""

    @property
    def id(self) -> Any:
        """The point's id (a `str`, an `int` or a `uuid.UUID`: compared as text)."""

    @property
    def score(self) -> float:
        """The engine's score, higher is better."""


P = TypeVar("P", bound=Scored)

RRF_K = 2
"""The ranking constant: qdrant-client's and the Qdrant server's default."""

SCORE_DIGITS = 6
"""Significant digits of a score that count for order: below a 32-bit float's ~7, so both engines agree."""

TIE_MARGIN = 8
"""Points asked beyond the limit, so that points tied at the cut are the same on every engine."""

FUSED_DEPTH = 48
"""The positions of a list that count toward a fused score. A point further down adds nothing, so its score,
and the order of the best, does not depend on how many points the caller asked for: a search asks for more
when its limit is larger (at least 40 + `TIE_MARGIN`, which this depth covers), and a deep position of one
list once decided a tie at the top of a larger search only."""


def ranked(points: Sequence[P], limit: int) -> list[P]:
    """The `limit` best of one list's points: by score to `SCORE_DIGITS` digits, best first, then by id."""
    return sorted(points, key=lambda p: (-float(f"{p.score:.{SCORE_DIGITS}g}"), str(p.id)))[:limit]


def fused(lists: Sequence[Sequence[P]], limit: int, weights: Sequence[float] = (1.0, 1.0)) -> list[tuple[P, float]]:
    """The `limit` best points of lists in `ranked` order, by RRF: scores `sum(weight / (RRF_K + position))`.

    Positions count from 0, as Qdrant's own RRF does, so the scores are the ones Qdrant would give for lists
    of `FUSED_DEPTH` points; positions past it add nothing. Points tied on the score keep the order in which
    they first appear, the first list's before the second's (the lexical list comes first: an exact word
    outranks a near meaning at equal rank).
    """
    scores: dict[str, float] = {}
    first: dict[str, P] = {}
    for weight, points in zip(weights, lists, strict=True):
        for position, point in enumerate(points):
            key = str(point.id)
            scores[key] = scores.get(key, 0.0) + (weight / (RRF_K + position) if position < FUSED_DEPTH else 0.0)
            first.setdefault(key, point)
    order = sorted(scores, key=scores.__getitem__, reverse=True)  # stable: ties keep first appearance
    return [(first[key], scores[key]) for key in order[:limit]]


def candidates(lists: Sequence[Sequence[P]], limit: int, dense_weight: float = 1.0) -> list[tuple[P, float]]:
    """The `limit` best points of an engine's lists (each asked for `limit + TIE_MARGIN`), with their scores.

    One list is ranked and keeps the engine's scores; two (lexical, dense) are fused and get RRF's, the dense
    list's terms times `dense_weight` (the model's: `EmbeddingSettings.fusion_weight`).
    """
    ordered = [ranked(points, limit) for points in lists]
    return [(p, p.score) for p in ordered[0]] if len(ordered) == 1 else fused(ordered, limit, (1.0, dense_weight))
