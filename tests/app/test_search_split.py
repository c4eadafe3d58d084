"""The search package by concept (issue 25): small modules, and a question read once for every stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.search.question import expand_query, parse_question, query_terms, tokenize
from tests.app.test_question import ROWS
from tests.quality.questions import QUESTIONS

SEARCH = Path(__file__).resolve().parents[2] / "app" / "search"
MAX_LINES = 500
TEXTS = sorted({row.question for row in ROWS} | {q.text for q in QUESTIONS})


@pytest.mark.parametrize("path", sorted(SEARCH.glob("*.py")), ids=lambda p: p.name)
def test_no_search_module_grows_over_the_cap(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_a_question_parsed_once_reads_as_its_tokens_terms_and_lexical_text() -> None:
    assert len(TEXTS) > 100
    for text in TEXTS:
        question = parse_question(text)
        assert question.text == text
        assert list(question.tokens) == tokenize(text)
        assert question.terms == query_terms(text)
        assert question.lexical == expand_query(text) == expand_query(text, question.terms)
