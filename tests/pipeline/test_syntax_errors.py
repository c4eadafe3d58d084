"""Syntax errors: code outside any method that tree-sitter cannot place is reported; broken methods are kept."""

from __future__ import annotations

from pipeline.model import SkipReason
from pipeline.syntax import parse
from tests.support.java import chunk_java, only

ERROR_IN_CLASS_BODY = """package demo;
class A {
    int x = 1;
    @@@ garbage here;
    void m() {
        return;
    }
}
"""
ERROR_AT_TOP_LEVEL = """package demo;
class A {
    void m() {}
}
}}} stray
"""
MISSING_IN_METHOD = """package demo;
class A {
    int ok() {
        return 1;
    }
    int broken(int a) {
        return a * (a + 1;
    }
}
"""


def _error_children(source: str, container: str) -> list[tuple[int, int]]:
    """1-based line spans of ERROR nodes directly inside the first node of kind `container`."""
    stack = [parse(source.encode()).root_node]
    while stack:
        node = stack.pop()
        if node.type == container:
            return [(c.start_point.row + 1, c.end_point.row + 1) for c in node.children if c.type == "ERROR"]
        stack.extend(node.children)
    return []


def test_premise_class_body_source_has_an_error_node_in_the_class_body() -> None:
    assert _error_children(ERROR_IN_CLASS_BODY, "class_body") == [(4, 4)]


def test_error_node_in_a_class_body_is_skipped_with_its_lines() -> None:
    result = chunk_java(ERROR_IN_CLASS_BODY)
    assert [(s.reason, s.line_start, s.line_end) for s in result.skipped] == [(SkipReason.SYNTAX_ERROR, 4, 4)]


def test_error_node_in_a_class_body_names_the_unparsable_code() -> None:
    (skipped,) = chunk_java(ERROR_IN_CLASS_BODY).skipped
    assert "@@@ garbage here" in skipped.detail


def test_members_around_an_error_node_are_still_chunks() -> None:
    result = chunk_java(ERROR_IN_CLASS_BODY)
    chunk = only(result, "demo.A.m")
    assert (chunk.line_start, chunk.line_end, chunk.parse_errors, result.parse_errors) == (5, 7, False, True)


def test_premise_top_level_source_has_an_error_node_at_top_level() -> None:
    assert _error_children(ERROR_AT_TOP_LEVEL, "program") == [(5, 5)]


def test_error_node_at_top_level_is_skipped_with_its_lines() -> None:
    result = chunk_java(ERROR_AT_TOP_LEVEL)
    assert [(s.reason, s.line_start, s.line_end) for s in result.skipped] == [(SkipReason.SYNTAX_ERROR, 5, 5)]
    assert [c.qualified_name for c in result.chunks] == ["demo.A", "demo.A.m"]


def test_file_without_any_parsable_type_is_skipped_whole() -> None:
    result = chunk_java("@@@ this is not java at all !!!\nnor this\n")
    assert result.chunks == ()
    assert [(s.reason, s.line_start, s.line_end) for s in result.skipped] == [(SkipReason.SYNTAX_ERROR, 1, 3)]


def test_method_with_a_missing_node_is_a_chunk_with_parse_errors() -> None:
    result = chunk_java(MISSING_IN_METHOD)
    chunk = only(result, "demo.A.broken")
    assert (chunk.line_start, chunk.line_end, chunk.parse_errors) == (6, 8, True)


def test_method_with_a_missing_node_is_not_reported_as_skipped() -> None:
    assert chunk_java(MISSING_IN_METHOD).skipped == ()


def test_clean_method_next_to_a_broken_one_has_no_parse_errors() -> None:
    assert only(chunk_java(MISSING_IN_METHOD), "demo.A.ok").parse_errors is False


def test_file_with_a_missing_node_reports_parse_errors() -> None:
    assert chunk_java(MISSING_IN_METHOD).parse_errors is True


def test_clean_file_reports_no_parse_errors() -> None:
    result = chunk_java("package demo;\nclass A {\n    void m() {}\n}\n")
    assert (result.parse_errors, result.skipped) == (False, ())
