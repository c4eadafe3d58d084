"""A question that names several things gets each of them near the top (`app.search.aspects`)."""

from __future__ import annotations

from app.search.aspects import INSERT_AT, TOP, aspects, surface
from app.search.question import query_terms
from tests.app.test_boosts import chunk

QUESTION = "how does the gateway combine the customers service and the visits service"


def test_the_things_a_question_joins_are_the_keywords_next_to_the_joining_word() -> None:
    assert aspects(query_terms(QUESTION).sequence) == [("customer", "service"), ("visit", "service")]
    assert aspects(query_terms("streaming JSON reader").sequence) == []


def test_a_thing_missing_from_the_first_results_is_moved_up_from_the_window() -> None:
    chunks = [chunk(f"m{i}", "gateway/CustomersServiceClient.java") for i in range(TOP + 2)]
    chunks.append(chunk("getVisits", "gateway/VisitsServiceClient.java"))
    order = list(range(len(chunks)))

    surfaced = surface(order, chunks, query_terms(QUESTION).sequence, window=40)

    assert surfaced[INSERT_AT] == len(chunks) - 1  # the visits client, from last to third
    assert sorted(surfaced) == order  # nothing lost or repeated


def test_a_question_of_one_thing_or_with_every_thing_on_top_keeps_its_order() -> None:
    chunks = [chunk("a", "x/CustomersServiceClient.java"), chunk("b", "x/VisitsServiceClient.java")]

    assert surface([0, 1], chunks, query_terms(QUESTION).sequence, window=40) == [0, 1]
    assert surface([1, 0], chunks, query_terms("the customers service client").sequence, window=40) == [1, 0]


def test_a_thing_beyond_the_window_is_not_searched_for() -> None:
    chunks = [chunk(f"m{i}", "gateway/CustomersServiceClient.java") for i in range(TOP + 2)]
    chunks.append(chunk("getVisits", "gateway/VisitsServiceClient.java"))
    order = list(range(len(chunks)))

    assert surface(order, chunks, query_terms(QUESTION).sequence, window=TOP + 1) == order


def test_a_join_of_single_words_names_no_things() -> None:
    assert aspects(query_terms("where are invalid or expired tokens counted").sequence) == []
    assert aspects(query_terms("where is a scheduled task paused or resumed").sequence) == []
