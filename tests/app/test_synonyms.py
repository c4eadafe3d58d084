"""Verb classes of method names (`app.search.synonyms`) and their share of the lexical query."""

from __future__ import annotations

from app.search.synonyms import SYNONYM_WEIGHT, VERB_CLASSES, related, synonyms
from app.store.lexical import query_vector, stem, term_id


def test_an_inflected_question_word_finds_its_class() -> None:
    assert "get" in related("fetched") and "fetch" not in related("fetched")
    assert "delete" in related("removing")
    assert related("invoice") == ()


def test_a_question_asks_for_the_class_mates_it_does_not_use_itself() -> None:
    found = synonyms(["fetch", "get", "account"])
    assert "load" in found and "get" not in found and "fetch" not in found
    assert set(found.values()) == {SYNONYM_WEIGHT}


def test_no_verb_is_in_two_classes() -> None:
    stems = [{stem(v) for v in verbs} for verbs in VERB_CLASSES]
    assert all(not a & b for i, a in enumerate(stems) for b in stems[i + 1 :])


def weights(text: str, related_words: dict[str, float]) -> dict[int, float]:
    vector = query_vector(text, related_words)
    return dict(zip(vector.indices, vector.values, strict=True))


def test_related_words_weigh_less_than_the_question_s_own() -> None:
    vector = weights("fetch", {"load": SYNONYM_WEIGHT})
    assert vector[term_id("fetch")] == 1.0
    assert vector[term_id("load")] == SYNONYM_WEIGHT
    # A word the question holds itself keeps its own weight as well.
    assert weights("load", {"load": SYNONYM_WEIGHT})[term_id("load")] == 1.0 + SYNONYM_WEIGHT
