"""Javadoc summaries: the first sentence, inline tags rendered, HTML removed; and which comment is Javadoc."""

from __future__ import annotations

import pytest

from pipeline.javadoc import summarize
from tests.support.java import chunk_java, only

SUMMARIES = [
    ("/** Returns one owner.\n *\n * @param id the id\n */", "Returns one owner."),
    ("/** Returns one owner. Then more. */", "Returns one owner."),
    ("/**\n * Line one\n * continues here. Next sentence.\n */", "Line one continues here."),
    ("/** No period at all */", "No period at all"),
    ("/** Ends at the end.*/", "Ends at the end."),
    ("/** Version 1.2 is out. Next. */", "Version 1.2 is out."),  # a period before a non-space goes on
    ("/** Tab\tended.\tNext */", "Tab ended."),
    # inline tags
    ("/** Uses {@code x} here. */", "Uses x here."),
    ("/** Uses {@code a. b} here. More. */", "Uses a. b here."),  # no sentence end inside a tag
    ("/** Ends with {@code x.} Next. */", "Ends with x. Next."),
    ("/** Returns a {@code List<Integer>} copy. */", "Returns a List<Integer> copy."),
    ("/** Is {@literal a & b}. */", "Is a & b."),
    ("/** See {@link Foo#bar}. */", "See Foo.bar."),
    ("/** See {@link #bar}. */", "See bar."),
    ("/** See {@link Foo}. */", "See Foo."),
    ("/** See {@link Foo#bar(int)}. */", "See Foo.bar(int)."),
    ("/** See {@link Foo#bar(int, String)}. */", "See Foo.bar(int, String)."),
    ("/** See {@link Foo#bar(int, String) the bar}. */", "See the bar."),
    ("/** Owns {@link Pet pets}. */", "Owns pets."),
    ("/** Knows the {@linkplain #max() largest item} of the page. */", "Knows the largest item of the page."),
    # HTML and paragraphs
    ("/** Returns the <em>largest</em> item. More. */", "Returns the largest item."),
    ("/** First part <p>second part. */", "First part"),
    ("/**\n * <p>Leading paragraph. Two.\n */", "Leading paragraph."),
    ("/** Text\n * @return x. */", "Text"),
    # no description
    ("/**\n * @param a only tags\n */", None),
    ("/** */", None),
    ("/**\n *\n */", None),
]


@pytest.mark.parametrize(("raw", "summary"), SUMMARIES, ids=[s or "None" for _, s in SUMMARIES])
def test_summarize(raw: str, summary: str | None) -> None:
    assert summarize(raw) == summary


def test_summary_is_white_space_collapsed() -> None:
    assert summarize("/**\n *   Spread    over\n *\tlines.\n */") == "Spread over lines."


def _method_summary(comment: str) -> str | None:
    source = f"package demo;\nclass A {{\n    {comment}\n    void m() {{}}\n}}\n"
    return only(chunk_java(source), "demo.A.m").javadoc_summary


def test_javadoc_before_a_method_is_its_summary() -> None:
    assert _method_summary("/** Does it. */") == "Does it."


def test_plain_block_comment_is_not_javadoc() -> None:
    assert _method_summary("/* Not documentation. */") is None


def test_empty_block_comment_is_not_javadoc() -> None:
    assert _method_summary("/**/") is None


def test_line_comment_between_javadoc_and_method_is_skipped() -> None:
    assert _method_summary("/** Does it. */\n    // TODO faster") == "Does it."


def test_javadoc_of_the_previous_member_is_not_taken() -> None:
    source = "package demo;\nclass A {\n    /** First. */\n    void a() {}\n    void b() {}\n}\n"
    assert only(chunk_java(source), "demo.A.b").javadoc_summary is None


def test_method_span_starts_at_its_javadoc() -> None:
    source = "package demo;\nclass A {\n    /**\n     * Does it.\n     */\n    @Deprecated\n    void m() {\n    }\n}\n"
    chunk = only(chunk_java(source), "demo.A.m")
    assert (chunk.line_start, chunk.line_end) == (3, 8)


def test_method_span_without_javadoc_starts_at_its_first_annotation() -> None:
    source = "package demo;\nclass A {\n    // a note\n    @Deprecated\n    public void m() {\n    }\n}\n"
    chunk = only(chunk_java(source), "demo.A.m")
    assert (chunk.line_start, chunk.line_end) == (4, 6)


def test_type_span_starts_at_its_javadoc() -> None:
    source = "package demo;\n\n/**\n * A thing.\n */\n@Deprecated\npublic class A {\n}\n"
    chunk = only(chunk_java(source), "demo.A")
    assert (chunk.line_start, chunk.line_end, chunk.javadoc_summary) == (3, 8, "A thing.")
