"""Chunk ids, content hashes and the embedding text."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import replace

import pytest

from pipeline.render import ID_NAMESPACE, Header, chunk_id, content_hash, embedding_text
from tests.support.java import chunk_java


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


def test_content_hash_is_sha256_hex() -> None:
    assert content_hash("héllo") == hashlib.sha256("héllo".encode()).hexdigest()


BASE = Header(
    repo_path="acme/shop",
    package="demo",
    qualified_name="demo.A.m",
    kind="method",
    stereotype=None,
    signature="m(): void",
    annotations=(),
    http_method=(),
    http_path=(),
    calls=(),
    javadoc_summary=None,
)


def test_minimal_embedding_text() -> None:
    assert embedding_text(BASE, "void m() {}") == (
        "repository: acme/shop\npackage: demo\nsymbol: demo.A.m\nkind: method\nsignature: m(): void\n---\nvoid m() {}"
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
        part=(1, 3),
    )
    assert embedding_text(header, "code").split("\n") == [
        "repository: acme/shop",
        "package: demo",
        "symbol: demo.A.m",
        "kind: method (rest_controller) (part 2 of 3)",
        "signature: m(): void",
        "annotations: @GetMapping @Transactional",
        "http: GET|HEAD /a, /b",
        "calls: A.x, B.y",
        "summary: Does m.",
        "---",
        "code",
    ]


def test_default_package_has_no_package_line() -> None:
    assert "package:" not in embedding_text(replace(BASE, package=""), "x")


def test_long_call_lists_are_cut_in_the_header() -> None:
    calls = tuple(f"A.m{i}" for i in range(30))
    text = embedding_text(replace(BASE, calls=calls), "x")
    assert "calls: " + ", ".join(calls[:24]) + " (+6 more)" in text.split("\n")


def test_chunk_ids_are_uuid5_strings() -> None:
    result = chunk_java("package demo;\nclass A {\n    void m() {}\n}\n")
    for chunk in result.chunks:
        parsed = uuid.UUID(chunk.id)
        assert (str(parsed), parsed.version) == (chunk.id, 5)
