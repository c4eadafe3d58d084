"""The question sets `python -m tests.quality.real --set NAME` runs, each with its own pinned repositories.

real: the four repositories of `repos.py` and the questions of `question_lookups.py` / `question_sets.py`.
kotlin: real Kotlin Spring code (spring-petclinic-kotlin, `tests/quality/kotlin/`, issue 29), every answer
    written by hand (gold.py reads Java only).
heldout: three other repositories and questions that no one tuning the ranking reads
    (`tests/quality/heldout/`, issue 26; docs/decisions.md "Held-out question set"). Strict: the
    run refuses to score when an expected answer is not declared in the source or not among the
    indexed chunks, since no one may fix such a question by looking at the results.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from app.store.engines import Store
from app.store.filters import everything
from tests.quality.heldout import questions as heldout_questions
from tests.quality.heldout import repos as heldout_repos
from tests.quality.kotlin import questions as kotlin_questions
from tests.quality.kotlin import repos as kotlin_repos
from tests.quality.real import repos
from tests.quality.real.question_lookups import SINGLES
from tests.quality.real.question_sets import ALL_SETS
from tests.quality.real.questions import SetQuestion, Single
from tests.quality.real.repos import Pin


@dataclass(frozen=True, slots=True)
class Suite:
    """Pinned repositories and the questions asked over them; `held_out`: refuse unscorable questions, hide misses."""

    name: str
    pins: tuple[Pin, ...]
    singles: tuple[Single, ...]
    sets: tuple[SetQuestion, ...]
    held_out: bool = False


SUITES: Final[dict[str, Suite]] = {
    suite.name: suite
    for suite in (
        Suite("real", repos.PINS, SINGLES, ALL_SETS),
        Suite("heldout", heldout_repos.PINS, heldout_questions.SINGLES, (), held_out=True),
        Suite("kotlin", kotlin_repos.PINS, kotlin_questions.SINGLES, kotlin_questions.SETS),
    )
}
DEFAULT_SUITE: Final = "real"


class UnscorableError(RuntimeError):
    """A held-out suite's question whose expected answer the source or the index does not hold."""


def refuse(reasons: Iterable[str]) -> None:
    """Raise `UnscorableError` listing `reasons`, if there are any."""
    listed = list(reasons)
    if listed:
        raise UnscorableError("unscorable questions (fix the question set, not the results):\n  " + "\n  ".join(listed))


async def indexed_names(store: Store) -> set[str]:
    """The qualified name of every chunk in the collection."""
    names: set[str] = set()
    async for record in store.scroll(everything(), ["qualified_name"]):
        name = (record.payload or {}).get("qualified_name")
        if isinstance(name, str):
            names.add(name)
    return names


def not_indexed(questions: Iterable[Single], expected: dict[int, frozenset[str]], names: set[str]) -> list[str]:
    """One line per question with an expected answer that no indexed chunk is named by."""
    return [
        f"{q.text!r}: {', '.join(sorted(missing))} not among the indexed chunks"
        for q in questions
        if (missing := expected[id(q)] - names)
    ]
