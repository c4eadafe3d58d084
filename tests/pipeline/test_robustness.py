"""chunk_source never raises: every kind of bad input comes back as a FileResult (Skipped entries at worst)."""

from __future__ import annotations

import random

import pytest

from pipeline.model import ChunkerConfig, FileResult, SkipReason
from tests.support.java import chunk_java

DEPTH = 2000


def _skip_reasons(result: FileResult) -> list[SkipReason]:
    return [s.reason for s in result.skipped]


@pytest.mark.parametrize(
    ("raw", "config", "expected"),
    [
        (b"", ChunkerConfig(), SkipReason.EMPTY),
        (b"   \n\t\n", ChunkerConfig(), SkipReason.EMPTY),
        (b"\x00\x01\x02\xca\xfe\xba\xbe\x00", ChunkerConfig(), SkipReason.BINARY),
        ("class Größe {}".encode("cp1252"), ChunkerConfig(fallback_encoding=None), SkipReason.NOT_UTF8),
        (b'class A { String s = "\x81"; }', ChunkerConfig(), SkipReason.NOT_UTF8),
        (b"class A {}" + b" " * 100, ChunkerConfig(max_file_bytes=50), SkipReason.TOO_LARGE),
    ],
    ids=["empty", "blank", "binary", "not-utf8", "undecodable", "too-large"],
)
def test_undecodable_input_is_skipped(raw: bytes, config: ChunkerConfig, expected: SkipReason) -> None:
    result = chunk_java(raw, config=config)
    assert (result.chunks, _skip_reasons(result)) == ((), [expected])


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes(seed: int) -> None:
    rng = random.Random(seed)
    chunk_java(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000))))


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_that_decode(seed: int) -> None:
    rng = random.Random(seed)
    # Bytes cp1252 can decode, NUL excluded, so the parser really sees them.
    alphabet = [b for b in range(1, 256) if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)]
    result = chunk_java(bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 4000))))
    assert isinstance(result, FileResult)


JAVA_TOKENS = [
    "class", "interface", "enum", "record", "@interface", "A", "B", "x", "void", "int", "{", "}", "(", ")", "<",
    ">", ";", ",", ".", "=", "->", "::", "@", "new", "return", "if", "else", "for", "static", "\"s\"", "'c'",
    "/**", "*/", "//", "\n", "extends", "implements", "throws", "switch", "case", "default", ":", "[", "]",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_random_java_token_soup(seed: int) -> None:
    rng = random.Random(seed)
    chunk_java(" ".join(rng.choice(JAVA_TOKENS) for _ in range(rng.randrange(1, 3000))))


def _in_method(body: str) -> str:
    return f"package demo;\nclass A {{\n    Object m(Object x) {{\n        {body}\n    }}\n}}\n"


CONCAT = " + ".join(['"a"'] * 5000)


def test_5000_term_string_concatenation() -> None:
    result = chunk_java(_in_method(f"return {CONCAT};"))
    assert "m" in [c.name for c in result.chunks]


def test_5000_term_string_concatenation_over_many_lines_with_a_small_budget() -> None:
    multiline = " +\n            ".join(['"a"'] * 5000)
    result = chunk_java(_in_method(f"return {multiline};"), config=ChunkerConfig(max_chunk_tokens=64))
    parts = [c for c in result.chunks if c.name == "m"]
    assert len(parts) > 1 and (parts[0].line_start, parts[-1].line_end) == (3, 5004)


def test_5000_term_string_concatenation_in_a_field() -> None:
    chunk_java(f"package demo;\nclass A {{\n    String s = {CONCAT};\n}}\n")


@pytest.mark.parametrize("annotation", ["RequestMapping", "GetMapping", "Path"])
def test_5000_term_string_concatenation_in_a_route_annotation(annotation: str) -> None:
    source = f"package demo;\n@RestController\nclass A {{\n    @{annotation}({CONCAT})\n    void m() {{}}\n}}\n"
    chunk_java(source)


def test_5000_term_string_concatenation_in_a_class_prefix() -> None:
    chunk_java(f"package demo;\n@RestController\n@RequestMapping({CONCAT})\nclass A {{\n}}\n")


@pytest.mark.parametrize(
    "body",
    [
        "{" * DEPTH + "}" * DEPTH,
        "if (x != null) {" * DEPTH + "}" * DEPTH,
        "return " + "f(" * DEPTH + ")" * DEPTH + ";",
        "return " + "(" * DEPTH + "x" + ")" * DEPTH + ";",
        "(" * DEPTH + "x" + ")" * DEPTH + ".toString();",  # a deeply parenthesized receiver
        "Runnable r = " + "() -> " * DEPTH + "null;",
        "return " + "x == null ? null : " * DEPTH + "x;",
        "return " + "new Box(" * DEPTH + ")" * DEPTH + ";",
        "return " + "(Object) " * DEPTH + "x;",
        "int[] a = " + "{" * DEPTH + "}" * DEPTH + ";",
        "return x" + ".next()" * 300 + ";",
    ],
    ids=[
        "blocks",
        "ifs",
        "calls",
        "parentheses",
        "parenthesized-receiver",
        "lambdas",
        "ternaries",
        "new",
        "casts",
        "array-initializers",
        "call-chain",
    ],
)
def test_deeply_nested_code_in_a_method(body: str) -> None:
    result = chunk_java(_in_method(body))
    assert "m" in [c.name for c in result.chunks]


def test_deeply_nested_generic_type() -> None:
    chunk_java("package demo;\nclass A {\n    " + "List<" * DEPTH + "X" + ">" * DEPTH + " f() { return null; }\n}\n")


def test_deeply_nested_annotation_values() -> None:
    chunk_java("package demo;\nclass A {\n    @A(" + "@B(" * DEPTH + ")" * DEPTH + ") void m() {}\n}\n")


def test_deeply_nested_classes() -> None:
    depth = 100
    result = chunk_java("package demo;\n" + "class C { " * depth + "void m() { x(); }" + " }" * depth + "\n")
    assert len([c for c in result.chunks if c.name == "m"]) == 1


@pytest.mark.parametrize(
    "source",
    [
        "class A { /* never closed",
        'class A { String s = "never closed; }',
        "class A { void m() {",
        "package demo;",
        "package demo;\nimport java.util.List;\n",
        "/** Just a comment. */",
        "<project><modelVersion>4.0.0</modelVersion></project>",
        "}}}}{{{{",
        "class A {\r void m() {\r x();\r }\r}\r",
        "\ufeffclass A {}",
        "class \u00c4 { void \u00df() { \U0001f600(); } }",
        'class A { void m() { String s = "' + "x" * 200_000 + '"; } }',
    ],
    ids=[
        "open-comment",
        "open-string",
        "open-method",
        "only-package",
        "only-imports",
        "only-comment",
        "xml",
        "braces",
        "cr-line-ends",
        "bom-in-text",
        "non-ascii-names",
        "long-line",
    ],
)
def test_malformed_or_odd_source(source: str) -> None:
    assert isinstance(chunk_java(source), FileResult)
