"""HTTP route patterns: lookup keys for the index and matching a concrete path to a pattern.

A route pattern such as `/owners/{ownerId}/pets/new` is stored with the key `4:owners` (segment
count and first literal segment; `*` when the first segment is a variable, `**` when the pattern
has a multi-segment wildcard). A concrete path `/owners/42/pets/new` asks for the keys it could
match, then each candidate pattern is matched segment by segment here.
"""

from __future__ import annotations

import re
from functools import lru_cache

ANY_KEY = "**"


def _segments(path: str) -> list[str]:
    return [seg for seg in path.split("?", 1)[0].split("/") if seg]


def _is_variable(segment: str) -> bool:
    return segment.startswith(("{", "${")) or segment == "*"


def route_keys(pattern: str) -> list[str]:
    """Index keys of a route pattern."""
    segments = _segments(pattern)
    if "**" in segments or any(seg.startswith("{*") for seg in segments):
        return [ANY_KEY]
    first = "*" if not segments or _is_variable(segments[0]) else segments[0]
    return [f"{len(segments)}:{first if segments else ''}"]


def query_keys(path: str) -> list[str]:
    """Keys of every pattern that could match a concrete path (or a pattern typed by a user)."""
    segments = _segments(path)
    if not segments:
        return ["0:", ANY_KEY]
    return [f"{len(segments)}:{segments[0]}", f"{len(segments)}:*", ANY_KEY]


CANDIDATE = "?:"
"""The key prefix of an unresolved call's literal tail (`?:visits`): found by any literal segment of an asked path."""


def candidate_keys(tail: str) -> list[str]:
    """The key of an unresolved call's literal tail (`pipeline.outbound.literal_tail`): its first literal segment."""
    first = next((seg for seg in _segments(tail) if not _is_variable(seg)), None)
    return [CANDIDATE + first] if first else []


def candidate_query_keys(path: str) -> list[str]:
    """Keys of the literal tails that could end a concrete path: one per literal segment of it."""
    return sorted({CANDIDATE + seg for seg in _segments(path) if not _is_variable(seg)})


def tail_matches(tail: str, path: str) -> bool:
    """Whether a concrete path (or pattern) ends with a call's literal tail, segment by segment."""
    wanted = _segments(tail)
    segments = _segments(path)
    if not wanted or len(wanted) > len(segments):
        return False
    end = "/" + "/".join(segments[len(segments) - len(wanted) :])
    return route_matches(tail, end) or route_matches(end, tail)


def specificity(pattern: str) -> tuple[int, int, int]:
    """Sort key of a route pattern, most specific first, the way Spring picks among matches.

    Fewer wildcards, then fewer variables, then more literal segments: `/owners/search` before
    `/owners/{id}`.
    """
    segments = _segments(pattern)
    wildcards = sum(1 for s in segments if s == "**" or s.startswith("{*"))
    variables = sum(1 for s in segments if _is_variable(s))
    return (wildcards, variables, -(len(segments) - variables - wildcards))


def application(file_path: str) -> str:
    """The application a source file belongs to: its build module's folder (before `src/main/`), else the root.

    One application dispatches a request to one handler, the most specific match (`specificity`).
    """
    at = file_path.find("src/main/")
    return file_path[:at] if at >= 0 else ""


def route_matches(pattern: str, path: str) -> bool:
    """Whether a concrete path (or the same pattern) is served by a route pattern."""
    return _compiled(pattern).match("/" + "/".join(_segments(path))) is not None


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    for seg in _segments(pattern):
        if seg == "**" or seg.startswith("{*"):
            parts.append("(?:/[^/]+)*")
        elif _is_variable(seg):
            parts.append(r"/(?:[^/]+|\{[^/]*\})")
        else:
            parts.append("/" + re.escape(seg))
    return re.compile("".join(parts) + "/?" + r"\Z" if parts else r"/?\Z")
