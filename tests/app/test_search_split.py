"""The search package by concept (issue 25): a question read once for every stage."""

from __future__ import annotations

from app.search.question import expand_query, parse_question, query_terms, tokenize
from tests.app.test_question import ROWS
from tests.quality.questions import QUESTIONS

TEXTS = sorted({row.question for row in ROWS} | {q.text for q in QUESTIONS})


def test_a_question_parsed_once_reads_as_its_tokens_terms_and_lexical_text() -> None:
    assert len(TEXTS) > 100
    for text in TEXTS:
        question = parse_question(text)
        assert question.text == text
        assert list(question.tokens) == tokenize(text)
        assert question.terms == query_terms(text)
        assert question.lexical == expand_query(text) == expand_query(text, question.terms)
