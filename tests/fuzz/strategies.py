"""Hypothesis strategies for hostile input: the values that broke the service once, mixed with random ones."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

HOSTILE_TEXT = st.sampled_from(
    ["", " ", "\x00", "a\x00b", "\ud800", "x\udfff", "line\nforged 2026 WARNING", "\r\n", "x" * 9000, "é" * 300, "%s%d"]
)
HOSTILE_INT = st.sampled_from([0, -1, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**40])
JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40)
)
JSON_VALUE = st.recursive(
    JSON_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


def deep(depth: int) -> bytes:
    """JSON nested `depth` levels deep (past the parser's recursion limit for large depths)."""
    return b'{"a":' * depth + b"1" + b"}" * depth


VALID_EVENTS: list[dict[str, Any]] = [
    {"event_name": "push", "object_kind": "push", "project_id": 15, "ref": "refs/heads/main", "after": "a" * 40,
     "project": {"path_with_namespace": "acme/shop", "default_branch": "main"}},
    {"event_name": "repository_update", "project_id": 16, "changes": [{"ref": "refs/heads/main", "after": "b" * 40}],
     "project": {"path_with_namespace": "acme/lib", "default_branch": "main"}},
    {"event_name": "project_destroy", "project_id": 17, "path_with_namespace": "acme/gone"},
    {"event_name": "project_rename", "project_id": 18, "path_with_namespace": "acme/new",
     "old_path_with_namespace": "acme/old"},
    {"event_name": "project_update", "project_id": 19, "path_with_namespace": "acme/upd"},
    {"event_name": "tag_push", "project_id": 20},
]  # fmt: skip
"""One real-shaped event of each kind the receiver reads (GitLab's system hook fields)."""

HOSTILE = st.one_of(HOSTILE_TEXT, HOSTILE_INT, st.sampled_from([None, True, 1.5, [], {}, [1], {"a": "\x00"}]))


def field_paths(event: dict[str, Any]) -> list[tuple[str, ...]]:
    """Every field path in an event, nested ones included (`project.default_branch`, `changes.0.ref`)."""
    found: list[tuple[str, ...]] = []
    for key, value in event.items():
        found.append((key,))
        if isinstance(value, dict):
            found += [(key, inner) for inner in value]
        if isinstance(value, list) and value and isinstance(value[0], dict):
            found += [(key, "0", inner) for inner in value[0]]
    return found


def replace_field(event: Any, path: tuple[str, ...], value: object) -> Any:
    if isinstance(event, list):
        return [replace_field(event[0], path[1:], value) if i == 0 else item for i, item in enumerate(event)]
    head, *rest = path
    return event | {head: replace_field(event[head], tuple(rest), value) if rest else value}


@st.composite
def mutated_events(draw: st.DrawFn) -> dict[str, Any]:
    """A valid event with one or two fields replaced by hostile values (so most reach the database)."""
    event: dict[str, Any] = draw(st.sampled_from(VALID_EVENTS))
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        event = replace_field(event, draw(st.sampled_from(field_paths(event))), draw(HOSTILE))
    return event


def encode(body: object) -> bytes:
    """JSON as a client would send it; lone surrogates travel as `\\udXXX` escapes."""
    return json.dumps(body).encode()


WEBHOOK_BODIES = st.one_of(
    mutated_events().map(encode),
    mutated_events().map(encode),  # twice: most draws should get past the parser to the database
    JSON_VALUE.map(encode),
    st.binary(max_size=200),
    st.sampled_from([deep(50), deep(5_000), deep(100_000), b"[" * 100_000, b"", b"\xff\xfe", b'{"a": NaN}']),
)
# Header values travel as latin-1 without CR/LF or surrounding spaces (h11 refuses them before sending).
HEADER_TEXT = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=80),
    st.sampled_from(["", "k" * 8000, "\x7f", "é", "9" * 400, "-1", "1e9"]),
).map(lambda value: value.strip(" \t"))
