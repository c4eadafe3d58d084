"""The search's caches of pure functions (of a word, a path, a label, a question) answer what the functions compute."""

from __future__ import annotations

from pathlib import PurePosixPath

from app.search import boosts, question
from app.search.boosts import blended, file_stem_parts, path_parts, path_share, stem_parts
from app.search.question import parse_question, query_terms
from app.store import lexical
from app.store.lexical import stem
from tests.app.test_boosts import chunk

WORDS = ("calculated", "calculation", "mapping", "payments", "status", "string", "entities", "need", "Java", "数据")
PATHS = ("gson/stream/JsonReader.java", "src/ArrayUtils.java", "a/b/ToStringBuilder.kt", "Top.java", "x/y/")


def test_the_cached_stem_is_the_stem() -> None:
    for word in WORDS:
        assert stem(word) == stem(word) == stem.__wrapped__(word)
    assert stem.cache_info().maxsize == lexical._CACHE_SIZE  # bounded


def test_the_cached_path_words_are_the_path_words() -> None:
    for path in PATHS:
        assert path_parts(path) == path_parts.__wrapped__(path)
        assert file_stem_parts(path) == stem_parts(PurePosixPath(path).stem)
    assert path_parts.cache_info().maxsize == file_stem_parts.cache_info().maxsize == boosts.PATHS_CACHED


def test_path_words_score_each_candidate_by_its_own_file() -> None:
    terms = query_terms("streaming JSON reader and token parsing")
    chunks = [chunk("a", "gson/stream/JsonReader.java"), chunk("b", "gson/Gson.java"), chunk("c", PATHS[0])]
    scores = [3.0, 2.0, 1.0]

    keys = boosts.keywords(terms)
    shares = [path_share(keys, path_parts(c.file_path)) for c in chunks]
    expected = [s + boosts.PATH_WEIGHT * 3.0 * share for s, share in zip(scores, shares, strict=True)]
    off = boosts.FILE_SIGNALS - {"path_words"}

    assert blended(terms, chunks, scores, off) == expected


def test_a_question_read_twice_is_read_once_and_reads_the_same() -> None:
    text = "who calls OwnerService.findById via GET /owners/{id}"
    fresh = parse_question.__wrapped__(text)

    assert parse_question(text) is parse_question(text)
    assert parse_question(text) == fresh
    assert query_terms(text) == fresh.terms == question._terms_of(question.tokenize(text))
    assert parse_question.cache_info().maxsize == question.QUESTIONS_CACHED
