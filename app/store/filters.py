"""Qdrant payload filters: the one module that builds `Filter`s and their conditions.

Search, access control, the sync and the store all narrow points by payload; they say *what* to
match through these functions and never build qdrant-client's models themselves, so the filter
vocabulary (and the qdrant-client types behind it) is written once. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models as qm

Filter = qm.Filter
"""A Qdrant payload filter (all of `must`, any of `should`, none of `must_not`)."""
Condition = qm.Condition
"""One clause of a filter: a field condition or a nested filter."""


def eq(key: str, value: str | int) -> qm.FieldCondition:
    """Points whose `key` equals `value` (for a list field: contains it)."""
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def any_of(key: str, values: Sequence[str] | Sequence[int]) -> qm.FieldCondition:
    """Points whose `key` equals one of `values` (for a list field: shares one)."""
    listed: list[str] | list[int] = list(values)  # type: ignore[assignment]
    return qm.FieldCondition(key=key, match=qm.MatchAny(any=listed))


def contains(key: str, text: str) -> qm.FieldCondition:
    """Points whose string `key` contains `text`, byte for byte (Qdrant's `match.substring`).

    An engine that does not know the condition (a Qdrant server before it) refuses the query: a caller
    that can do without it retries without it (`app.search.grep`).
    """
    return qm.FieldCondition(key=key, match=qm.MatchSubstring(substring=text))


def between(key: str, low: int, high: int) -> qm.FieldCondition:
    """Points whose numeric `key` is in `low..high`, both included."""
    return qm.FieldCondition(key=key, range=qm.Range(gte=low, lte=high))


def is_empty(key: str) -> qm.IsEmptyCondition:
    """Points that have no value (or an empty list) for `key`."""
    return qm.IsEmptyCondition(is_empty=qm.PayloadField(key=key))


def all_of(*conditions: Condition, none_of: Sequence[Condition] = ()) -> qm.Filter:
    """Points matching every condition and none of `none_of`."""
    return qm.Filter(must=list(conditions), must_not=list(none_of) or None)


def either(*conditions: Condition) -> qm.Filter:
    """Points matching at least one of the conditions."""
    return qm.Filter(should=list(conditions))


def everything() -> qm.Filter:
    """A filter every point matches."""
    return qm.Filter()
