"""Chunk ids, content hashes and the embedding text."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import replace

import pytest

from pipeline.model import SymbolType
from pipeline.render import (
    ID_NAMESPACE,
    TEXT_FORM,
    called_words,
    chunk_id,
    chunk_id_in,
    chunk_id_prefix,
    content_hash,
    embedding_text,
    identifier_words,
    model_text,
)
from tests.support.java import chunk_java, header_chunk


@pytest.mark.parametrize(
    ("repo", "path", "key", "part"),
    [
        ("acme/shop", "shop-core/src/main/java/A.java", "A.find(Long)", 0),
        ("acme/shop", "shop-core/src/main/java/A.java", "A.find(Long)", 3),
        ("", "", "", 0),
        ("grüppe/prøject", "src/main/java/Größe.java", "Größe.<clinit>()#2", 1),
        ("a\nb", "c", "type:A", 0),
    ],
)
def test_chunk_id_is_the_uuid5_of_repo_file_key_and_part(repo: str, path: str, key: str, part: int) -> None:
    assert chunk_id(repo, path, key, part) == str(uuid.uuid5(ID_NAMESPACE, f"{repo}\n{path}\n{key}\n{part}"))


def test_id_namespace_never_changes() -> None:
    assert str(ID_NAMESPACE) == "6f1d3c2a-8a4e-5b7f-9c0d-1e2f3a4b5c6d"


def test_content_hash_is_the_sha256_of_the_text_form_and_the_text() -> None:
    assert content_hash("héllo") == hashlib.sha256(f"form {TEXT_FORM}\nhéllo".encode()).hexdigest()


def test_content_hash_leaves_out_the_repository_line() -> None:
    text = "kind: method\n---\nx"
    assert content_hash(f"repository: a/b\n{text}") == content_hash(f"repository: c/d\n{text}")
    assert content_hash("kind: method\n---\nx") != content_hash("kind: class\n---\nx")


BASE = header_chunk()


def test_minimal_embedding_text() -> None:
    assert embedding_text(replace(BASE, code="void m() {}")) == (
        "repository: acme/shop\npackage: demo\nsymbol: demo.A.m\nwords: a m\nkind: method\nsignature: m(): void\n"
        "---\nvoid m() {}"
    )


def test_full_embedding_text_header() -> None:
    header = replace(
        BASE,
        stereotype="rest_controller",
        annotations=("@GetMapping", "@Transactional"),
        http_method=("GET", "HEAD"),
        http_path=("/a", "/b"),
        calls=("A.x", "B.y"),
        javadoc_summary="Does m.",
        symbol_type=SymbolType.METHOD_PART,
        part_index=1,
        part_count=3,
        code="code",
    )
    assert embedding_text(replace(header, qualified_name="demo.OrderService.getTotal"), "Orders.").split("\n") == [
        "repository: acme/shop",
        "package: demo",
        "symbol: demo.OrderService.getTotal",
        "words: order service get total",
        "kind: method_part (rest_controller) (part 2 of 3)",
        "signature: m(): void",
        "annotations: @GetMapping @Transactional",
        "http: GET|HEAD /a, /b",
        "summary: Does m.",
        "type summary: Orders.",
        "calls: A.x, B.y",
        "---",
        "code",
    ]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("A.m", "a m"),
        ("Account.save", "account save"),
        ("OrderServiceImpl.getTotal", "order service impl get total"),
        ("HTTPServer.parseURLs", "http server parse urls"),
        ("Order.order_id", "order id"),
        ("订单.查询", ""),
        ("X.v2Api", "x v 2 api"),
    ],
)
def test_identifier_words(name: str, words: str) -> None:
    assert identifier_words(name) == words


def test_a_model_reads_the_text_without_its_dotted_place_and_calls_as_words() -> None:
    text = embedding_text(
        replace(BASE, qualified_name="demo.Cart.add", calls=("Member.getId", "Mapper.insert", "A.b().getId"), code="c")
    )
    assert model_text(text).split("\n") == [
        "words: cart add",
        "kind: method",
        "signature: m(): void",
        "calls: get id, insert",
        "---",
        "c",
    ]


def test_a_text_without_a_header_is_read_as_it_is() -> None:
    assert model_text("void m() {}") == "void m() {}"
    assert model_text("kind: method\n---\nsymbol: not a header line") == "kind: method\n---\nsymbol: not a header line"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("A.x, B.y", "x, y"),
        ("Repo.findById, Other.findById, List.get", "find by id, get"),
        ("Ex.createCriteria().andIdEqualTo (+6 more)", "and id equal to"),
        ("订单.查询, A.getURLs", "get urls"),
    ],
)
def test_called_words(line: str, words: str) -> None:
    assert called_words(line) == words


def test_a_member_text_carries_its_type_summary_and_a_type_text_does_not() -> None:
    source = "package demo;\n/** Keeps the orders. */\nclass Store {\n    /** Adds one. */\n    void add() {}\n}\n"
    chunks = {c.name: c for c in chunk_java(source).chunks}
    assert "type summary: Keeps the orders." in chunks["add"].text.split("\n")
    assert "type summary:" not in chunks["Store"].text
    assert "summary: Keeps the orders." in chunks["Store"].text.split("\n")


def test_default_package_has_no_package_line() -> None:
    assert "package:" not in embedding_text(replace(BASE, package=""))


def test_long_call_lists_are_cut_in_the_header() -> None:
    calls = tuple(f"A.m{i}" for i in range(30))
    text = embedding_text(replace(BASE, calls=calls))
    assert "calls: " + ", ".join(calls[:24]) + " (+6 more)" in text.split("\n")


def test_chunk_ids_are_uuid5_strings() -> None:
    result = chunk_java("package demo;\nclass A {\n    void m() {}\n}\n")
    for chunk in result.chunks:
        parsed = uuid.UUID(chunk.id)
        assert (str(parsed), parsed.version) == (chunk.id, 5)


def test_a_chunk_carries_the_hash_of_its_text_and_the_id_of_its_key() -> None:
    result = chunk_java("package demo;\nclass A {\n    void m(int x) {}\n}\n", "src/A.java")
    prefix = chunk_id_prefix("demo/repo", "src/A.java")
    for chunk in result.chunks:
        assert chunk.text == embedding_text(chunk) and chunk.content_hash == content_hash(chunk.text)
    method = next(c for c in result.chunks if c.name == "m")
    assert method.id == chunk_id_in(prefix, "A.m(int)", 0)


def test_chunk_id_from_a_prefix_is_the_uuid5_of_the_whole_name() -> None:
    prefix = chunk_id_prefix("gitlab:7", "src/Größe.java")
    expected = str(uuid.uuid5(ID_NAMESPACE, "gitlab:7\nsrc/Größe.java\nGröße.m()\n3"))
    assert chunk_id_in(prefix, "Größe.m()", 3) == expected == chunk_id("gitlab:7", "src/Größe.java", "Größe.m()", 3)
