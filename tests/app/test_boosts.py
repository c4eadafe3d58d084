"""The score-level signals of the rerank (`app.search.boosts`): path words, file coherence, file saturation."""

from __future__ import annotations

import dataclasses

import pytest

from app.search import boosts
from app.search.boosts import (
    COMPOUND_WEIGHT,
    SATURATION,
    asks_behaviour,
    blended,
    coherence,
    compounds,
    is_symbol_question,
    keywords,
    named_files,
    names_stem,
    path_parts,
    path_share,
    reordered,
    saturated,
    stem_parts,
)
from app.search.question import parse_question, query_terms
from app.search.ranking import Evidence, rerank, types_first
from pipeline.model import Chunk, SymbolType


def chunk(name: str, path: str) -> Chunk:
    return Chunk(
        id=name,
        repo_path="g/r",
        gitlab_project_id=None,
        commit_sha=None,
        branch=None,
        file_path=path,
        package="com.acme",
        qualified_name=f"com.acme.{name}",
        symbol_type=SymbolType.METHOD,
        name=name,
        signature=name,
        enclosing_type="com.acme.Thing",
        line_start=1,
        line_end=2,
        content_hash=name,
        code="",
        text="",
    )


def test_path_parts_are_the_words_of_the_stem_and_the_folder() -> None:
    parts = path_parts("gson/src/main/java/com/google/gson/stream/JsonReader.java")

    assert {"json", "reader", "stream"} <= parts
    assert "google" not in parts  # only the file's own folder


def test_a_keyword_matches_a_path_part_it_prefixes_or_extends() -> None:
    parts = path_parts("databind/deser/DeserializerCache.java")

    assert path_share(frozenset({"deserializer", "cache"}), parts) == 1.0
    assert path_share(frozenset({"cach", "lookup"}), parts) == 0.5  # "cach" prefixes `cache`
    assert path_share(frozenset({"ca", "lookup"}), parts) == 0.0  # too short to be a prefix match
    assert path_share(frozenset(), parts) == 0.0
    assert path_share(frozenset({"deserialization"}), parts) == 1.0  # its stem `deserializ` prefixes the part


def test_keywords_drop_question_scaffolding_and_stop_words() -> None:
    assert keywords(query_terms("where is the retry back-off computed")) == {"retry", "back", "off", "computed"}


def test_a_question_of_identifiers_only_is_a_symbol_question() -> None:
    assert is_symbol_question(query_terms("TypeAdapter"))
    assert is_symbol_question(query_terms("Gson.toJson"))
    assert not is_symbol_question(query_terms("JsonReader token parsing"))
    assert not is_symbol_question(query_terms("streaming JSON reader"))


def test_a_behaviour_question_has_a_question_word_and_no_type_word() -> None:
    assert asks_behaviour(query_terms("how is the cart emptied"))
    assert not asks_behaviour(query_terms("which class parses dates"))
    assert not asks_behaviour(query_terms("streaming JSON reader and token parsing"))


def test_a_file_named_for_the_question_outranks_a_chunk_that_only_repeats_its_words() -> None:
    chunks = [chunk("a", "src/Util.java"), chunk("b", "src/stream/JsonReader.java")]
    terms = query_terms("streaming JSON reader")

    assert reordered(terms, chunks, [10.0, 6.0]) == [1, 0]
    assert reordered(query_terms("how is a JSON reader streamed"), chunks, [10.0, 6.0]) == [0, 1]  # a behaviour


def test_path_words_do_not_apply_to_a_symbol_question() -> None:
    chunks = [chunk("a", "src/Other.java"), chunk("b", "src/TypeAdapter.java")]

    assert blended(query_terms("TypeAdapter"), chunks, [10.0, 6.0]) == [10.0, 6.0]  # one chunk a file: no evidence


def test_coherence_lifts_each_files_best_chunk_by_its_share_of_the_largest_file_sum() -> None:
    chunks = [chunk("a", "A.java"), chunk("b", "B.java"), chunk("c", "B.java"), chunk("d", "B.java")]

    lifts = coherence(chunks, [9.0, 5.0, 4.0, 3.0])

    assert lifts == {0: 9.0 / 12.0, 1: 1.0}  # B's three chunks sum to 12: its best one is lifted most


def test_saturation_halves_each_chunk_of_a_file_past_the_first_two() -> None:
    files = ["A"] * (SATURATION + 2) + ["B"]
    scores = [10.0, 9.0, 8.0, 7.0, 3.0]

    order = saturated(range(5), files, scores)

    assert order == [0, 1, 2, 4, 3]  # A's third: 8 x 0.5 = 4 > 3; A's fourth: 7 x 0.25 = 1.75 < 3


def test_each_signal_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [chunk("a", "src/Util.java"), chunk("b", "src/stream/JsonReader.java")]
    terms = query_terms("streaming JSON reader")
    monkeypatch.setattr(boosts, "DISABLED", set(boosts.SIGNALS))

    assert blended(terms, chunks, [10.0, 6.0]) == [10.0, 6.0]
    assert reordered(terms, chunks, [10.0, 6.0]) == [0, 1]


def test_rerank_orders_the_store_candidates_by_the_blended_scores_and_keeps_exact_matches_first() -> None:
    chunks = [chunk("a", "src/Util.java"), chunk("b", "src/stream/JsonReader.java"), chunk("c", "src/C.java")]
    terms = query_terms("streaming JSON reader")

    assert rerank(terms, chunks, scores=[10.0, 6.0, 5.0])[0] == 1
    assert rerank(terms, chunks)[0] == 0  # without scores: the store's order
    assert rerank(terms, chunks, Evidence(symbols=[0]), scores=[10.0, 6.0, 5.0])[0] == 0  # an exact match leads


def test_compounds_join_adjacent_plain_words_into_the_names_they_spell() -> None:
    found = compounds(parse_question("JSON object with named fields"))

    assert found == {"jsonobject": COMPOUND_WEIGHT, "namedfield": COMPOUND_WEIGHT}  # "with" breaks the run


def test_compounds_reach_three_words_and_skip_behaviour_questions() -> None:
    assert {"typeadapter", "adapterfactory", "typeadapterfactory"} <= set(
        compounds(parse_question("type adapter factories for a given type"))
    )
    assert compounds(parse_question("how is a bank account updated")) == {}


def test_the_type_of_a_name_comes_before_its_constructors() -> None:
    ctor = dataclasses.replace(chunk("ObjectMapper", "ObjectMapper.java"), symbol_type=SymbolType.CONSTRUCTOR)
    cls = dataclasses.replace(chunk("ObjectMapper", "ObjectMapper.java"), symbol_type=SymbolType.CLASS)

    assert types_first([0, 1, 2], [ctor, ctor, cls]) == [2, 0, 1]
    assert rerank(query_terms("ObjectMapper"), [ctor, cls], Evidence(symbols=[0, 1]))[0] == 1


def test_a_question_names_a_stem_when_it_writes_its_words_in_order_next_to_each_other() -> None:
    sequence = query_terms("array utility operations and safe type conversion").sequence

    assert names_stem(sequence, stem_parts("ArrayUtils"))  # "utility" and `Utils` share `util`
    assert not names_stem(sequence, stem_parts("TypeUtils"))  # "type" is not followed by "utility"
    assert not names_stem(sequence, stem_parts("Array"))  # one word is not a name phrase
    assert names_stem(query_terms("the toString builder").sequence, stem_parts("ToStringBuilder"))
    assert not names_stem(query_terms("builder of strings").sequence, stem_parts("StringBuilder"))


def test_a_file_the_question_names_outranks_one_that_shares_as_many_of_its_words() -> None:
    chunks = [chunk("a", "src/TypeUtils.java"), chunk("b", "src/ArrayUtils.java")]
    terms = query_terms("array utility operations and safe type conversion")

    assert named_files(terms.sequence, [c.file_path for c in chunks]) == {"src/ArrayUtils.java"}
    assert reordered(terms, chunks, [10.0, 6.0]) == [1, 0]
    assert reordered(query_terms("how does the array utility convert"), chunks, [10.0, 6.0]) == [0, 1]
