"""What a question about a place in the architecture asks for, and a file's evidence (`app.search.type_evidence`)."""

from __future__ import annotations

import pytest

from app.search import boosts
from app.search.boosts import asks_behaviour, blended
from app.search.question import query_terms
from app.search.type_evidence import asks_for_type, file_evidence
from tests.app.test_boosts import chunk


def test_class_words_ask_for_a_type_wherever_they_stand() -> None:
    assert asks_for_type(query_terms("which class parses dates"))
    assert asks_for_type(query_terms("the enum of order states, where is it"))
    assert asks_for_type(query_terms("how is the annotation read"))


def test_type_asks_for_a_type_only_after_which_or_what() -> None:
    assert asks_for_type(query_terms("which type holds the order lines"))
    assert asks_for_type(query_terms("what type is returned for a page"))
    assert not asks_for_type(query_terms("how the mapper resolves a deserializer for a given Java type"))
    assert not asks_for_type(query_terms("how type adapter factories are registered"))


def test_a_question_about_how_a_type_is_handled_is_a_behaviour_question() -> None:
    assert asks_behaviour(query_terms("how type adapter factories are selected for a given type"))
    assert not asks_behaviour(query_terms("which type adapter factory is selected"))


def test_asks_type_off_reads_any_type_word_as_asking_for_a_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boosts, "DISABLED", {"asks_type"})

    assert not asks_behaviour(query_terms("how type adapter factories are selected for a given type"))


def test_a_files_best_candidate_is_lifted_by_its_next_best_candidates() -> None:
    chunks = [chunk("a", "A.java"), chunk("b", "B.java"), chunk("c", "B.java"), chunk("d", "B.java")]

    lifts = file_evidence(chunks, [10.0, 5.0, 4.0, 3.0])

    assert lifts == {0: 0.0, 1: (4.0 + 3.0) / 10.0}  # one chunk is no evidence beyond itself


def test_only_a_files_next_best_candidates_count() -> None:
    chunks = [chunk(str(i), "A.java") for i in range(10)]

    lifts = file_evidence(chunks, [1.0] * 10)

    assert lifts == {0: 5.0}  # the best, then the next OTHERS (5), not the whole file
    assert file_evidence(chunks, [0.0] * 10) == {}


def test_a_file_whose_members_match_outranks_a_lone_chunk_repeating_the_words() -> None:
    chunks = [chunk("lone", "Context.java"), *(chunk(f"m{i}", "Factory.java") for i in range(4))]
    scores = [10.0, 8.0, 7.0, 6.0, 5.0]
    terms = query_terms("reflection based field binding")

    lifted = blended(terms, chunks, scores)

    assert lifted[1] > lifted[0]  # 8 + 0.5 x (7 + 6 + 5) = 17 against 10


def test_file_evidence_off_is_the_coherence_of_before(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [chunk("lone", "Context.java"), *(chunk(f"m{i}", "Factory.java") for i in range(4))]
    scores = [10.0, 8.0, 7.0, 6.0, 5.0]
    monkeypatch.setattr(boosts, "DISABLED", {"file_evidence"})

    lifted = blended(query_terms("reflection based field binding"), chunks, scores)

    assert lifted[:2] == [10.0 + 2.0 * 10 / 26, 8.0 + 2.0]  # 0.2 x best x the file's sum over the largest (26)
