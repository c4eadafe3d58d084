"""Retrieval quality gate: the written questions in lexical-only and hybrid mode.

The fixture is indexed once per mode and module. Each mode's report is printed (run with `-s`, or
read it from `python -m tests.quality.run_report`) and every overall metric must stay at or above
the level measured when the floor was last set, so a ranking regression fails here. When a change
improves the numbers, raise the floors to the new level (floored to 2 decimals).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import pytest
import pytest_asyncio

from app.auth.access import LOCAL
from app.search.service import SearchService
from tests.quality.corpus import Mode, indexed_search
from tests.quality.harness import Metrics, Report, evaluate, format_report
from tests.quality.questions import KINDS, QUESTIONS

# Measured on the 64 questions of questions.py and floored to 2 decimals (`python -m tests.quality.run_report`).
FLOORS: Final[dict[Mode, Metrics]] = {
    # MRR 0.79 → 0.78 with issue 12's chunks of bodiless methods (26 more candidates): annotation R@5
    # 0.89 → 1.00 and both repository-method symbols answered by the method itself, but two natural
    # questions lose ranks to interface declarations whose javadoc names the asked words (decisions.md).
    "lexical": Metrics(count=64, recall_at_1=0.71, recall_at_5=0.89, mrr=0.78),
    "hybrid": Metrics(count=64, recall_at_1=0.71, recall_at_5=0.87, mrr=0.78),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lexical_search() -> AsyncIterator[SearchService]:
    async with indexed_search("lexical") as search:
        yield search


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hybrid_search() -> AsyncIterator[SearchService]:
    async with indexed_search("hybrid") as search:
        yield search


def test_questions_cover_every_kind() -> None:
    counts = {kind: sum(1 for q in QUESTIONS if q.kind == kind) for kind in KINDS}

    assert len(QUESTIONS) >= 36
    assert min(counts.values()) >= 5, counts
    assert len({q.text for q in QUESTIONS}) == len(QUESTIONS)


@pytest.mark.asyncio(loop_scope="module")
async def test_every_expected_answer_is_an_indexed_chunk(lexical_search: SearchService) -> None:
    # A typo in an expected name would make a question unanswerable and silently lower the scores.
    expected = sorted({name for q in QUESTIONS for name in q.expected})

    missing = [name for name in expected if not await lexical_search.symbol(LOCAL, name)]

    assert missing == []


@pytest.mark.asyncio(loop_scope="module")
async def test_lexical_quality(lexical_search: SearchService, capsys: pytest.CaptureFixture[str]) -> None:
    report = await evaluate(lexical_search, QUESTIONS)

    _show("lexical", report, capsys)
    _assert_at_least(report, FLOORS["lexical"])


@pytest.mark.asyncio(loop_scope="module")
async def test_hybrid_quality(hybrid_search: SearchService, capsys: pytest.CaptureFixture[str]) -> None:
    report = await evaluate(hybrid_search, QUESTIONS)

    _show("hybrid (fake embedder over HTTP)", report, capsys)
    _assert_at_least(report, FLOORS["hybrid"])


def _show(title: str, report: Report, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print("\n" + format_report(report, title=f"== {title}"))


def _assert_at_least(report: Report, floor: Metrics) -> None:
    got = report.overall
    table = format_report(report, misses=False)
    assert got.count == floor.count, "questions were added or removed: measure again and reset the floors"
    assert got.recall_at_1 >= floor.recall_at_1, table
    assert got.recall_at_5 >= floor.recall_at_5, table
    assert got.mrr >= floor.mrr, table
