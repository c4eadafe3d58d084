"""Qdrant Edge's filter and point types from the ones `app.store.filters` and `app.store.vectors` build (pure).

The store vocabulary is written once, as qdrant-client models (`app.store.filters`); the Edge adapter
(`app.store.edge`) passes every filter, point and vector through these translations, so the two
engines answer the same questions. Only what `app.store.filters` can build is translated; anything else
is a programming error (`TypeError`), not a silent "match everything".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import qdrant_edge as qe
from qdrant_client import models as qm


def edge_filter(where: qm.Filter | None) -> qe.Filter | None:
    """The Edge form of a qdrant-client filter (None stays None)."""
    if where is None:
        return None
    return qe.Filter(
        must=_conditions(where.must),
        should=_conditions(where.should),
        must_not=_conditions(where.must_not),
    )


def _conditions(conditions: Any) -> list[Any] | None:
    if conditions is None:
        return None
    listed = conditions if isinstance(conditions, list) else [conditions]
    return [_condition(c) for c in listed]


def _condition(condition: Any) -> Any:
    if isinstance(condition, qm.Filter):
        return edge_filter(condition)
    if isinstance(condition, qm.IsEmptyCondition):
        return qe.IsEmptyCondition(condition.is_empty.key)
    if isinstance(condition, qm.FieldCondition):
        return _field(condition)
    raise TypeError(f"no Edge form for the filter condition {condition!r}")


def _field(condition: qm.FieldCondition) -> qe.FieldCondition:
    match, rng = condition.match, condition.range
    if isinstance(match, qm.MatchValue):
        return qe.FieldCondition(key=condition.key, match=qe.MatchValue(match.value))
    if isinstance(match, qm.MatchAny):
        return qe.FieldCondition(key=condition.key, match=qe.MatchAny(match.any))
    if isinstance(match, qm.MatchSubstring):
        return qe.FieldCondition(key=condition.key, match=qe.MatchSubstring(match.substring))
    if match is None and isinstance(rng, qm.Range):
        bounds = qe.RangeFloat(gte=rng.gte, gt=rng.gt, lte=rng.lte, lt=rng.lt)
        return qe.FieldCondition(key=condition.key, range=bounds)
    raise TypeError(f"no Edge form for the field condition {condition!r}")


def edge_vectors(vector: Any) -> dict[str, Any]:
    """Named vectors of a point: dense lists as they are, sparse ones as Edge's `SparseVector`."""
    if not isinstance(vector, Mapping):
        raise TypeError(f"points carry named vectors, not {type(vector).__name__}")
    return {name: _edge_vector(value) for name, value in vector.items()}


def _edge_vector(value: Any) -> Any:
    if isinstance(value, qm.SparseVector):
        return qe.SparseVector(list(value.indices), list(value.values))
    if isinstance(value, qe.SparseVector):
        return value
    return [float(x) for x in value]


def edge_point(point: qm.PointStruct) -> qe.Point:
    """The Edge form of a point built by `app.store.vectors.chunk_point` or `moved_point`."""
    return qe.Point(str(point.id), edge_vectors(point.vector), dict(point.payload or {}))


def client_vectors(vector: Any) -> dict[str, Any] | None:
    """Stored vectors in qdrant-client's shape (so a moved point can be written to either engine)."""
    if vector is None:
        return None
    out: dict[str, Any] = {}
    for name, value in dict(vector).items():
        if isinstance(value, qe.SparseVector):
            out[name] = qm.SparseVector(indices=list(value.indices), values=list(value.values))
        else:
            out[name] = list(value)
    return out
