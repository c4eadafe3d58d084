"""`auto_context` quality gate (issue 16): irrelevant prompts get nothing, relevant ones their chunk, lexical-only.

The floors are what `python -m tests.quality.context_report` measured when the threshold was set
(docs/performance.md, "auto_context and the agent hook"), floored to 2 decimals; a change to the
relevance measure, the threshold or the selection that loses answers or lets noise in fails here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import pytest
import pytest_asyncio

from app.search.context import DEFAULT_MAX_CHARS, MIN_RELEVANCE
from app.search.service import SearchService
from tests.quality.context_report import RELEVANT, pick, quality, signal
from tests.quality.corpus import indexed_search
from tests.quality.questions import QUESTIONS, Question
from tests.quality.tasks import IRRELEVANT, TASKS

pytestmark = pytest.mark.asyncio(loop_scope="module")

FOUND_FLOORS: Final = {"questions": 0.81, "tasks": 0.91}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def search() -> AsyncIterator[SearchService]:
    async with indexed_search("lexical") as opened:
        yield opened


@pytest.mark.timeout(120)
async def test_the_threshold_is_the_measured_one(search: SearchService) -> None:
    relevant = [await signal(search, q.text) for q in RELEVANT]
    irrelevant = [await signal(search, text) for text in IRRELEVANT]

    assert pick(relevant, irrelevant) == MIN_RELEVANCE


@pytest.mark.timeout(120)
async def test_no_irrelevant_prompt_gets_context(search: SearchService) -> None:
    prompts = [Question(text, "natural", frozenset({"-"})) for text in IRRELEVANT]

    assert (await quality(search, prompts, DEFAULT_MAX_CHARS)).any_context == 0.0


@pytest.mark.timeout(120)
async def test_the_right_chunk_is_in_the_context(search: SearchService) -> None:
    questions = await quality(search, QUESTIONS, DEFAULT_MAX_CHARS)
    tasks = await quality(search, TASKS, DEFAULT_MAX_CHARS)

    assert questions.found >= FOUND_FLOORS["questions"] and tasks.found >= FOUND_FLOORS["tasks"]
    assert max(questions.chars + tasks.chars) <= DEFAULT_MAX_CHARS
