"""Chunk ids: deterministic, unique per symbol (overloads, parts), per repository, and stable under edits elsewhere."""

from __future__ import annotations

import pytest

from pipeline.model import Chunk, ChunkerConfig, FileResult
from tests.support.java import chunk_java
from tests.support.java_fixtures import SHOP_DIR

OWNER_SERVICE = "shop-core/src/main/java/com/acme/shop/core/service/OwnerService.java"
SOURCE = (SHOP_DIR / OWNER_SERVICE).read_text(encoding="utf-8")
SERVICE = "com.acme.shop.core.service.OwnerService"

# create(..)'s logging line, which sits above delete(..) in the file.
CREATE_LOG = '        log.info("Created owner {}", saved.getId());\n'
EDITED = SOURCE.replace(CREATE_LOG, CREATE_LOG + '        log.debug("and published the event");\n')


def _chunk(source: str = SOURCE, repo: str = "acme/shop", path: str = OWNER_SERVICE) -> FileResult:
    return chunk_java(source, path, repo=repo)


def _method(result: FileResult, name: str, *params: str) -> Chunk:
    found = [c for c in result.chunks if c.qualified_name == f"{SERVICE}.{name}" and c.parameter_types == params]
    assert len(found) == 1
    return found[0]


def test_edit_fixture_changes_create_only() -> None:
    assert EDITED != SOURCE and EDITED.count("\n") == SOURCE.count("\n") + 1


def test_ids_are_deterministic() -> None:
    assert [c.id for c in _chunk().chunks] == [c.id for c in _chunk().chunks]


def test_overloads_have_distinct_ids() -> None:
    result = _chunk()
    ids = {_method(result, "find", *params).id for params in (("Long",), ("String",), ("String", "int"))}
    assert len(ids) == 3


def test_same_code_in_another_repository_has_other_ids() -> None:
    here, there = _chunk(repo="acme/shop"), _chunk(repo="acme/shop-fork")
    assert not {c.id for c in here.chunks} & {c.id for c in there.chunks}


def test_same_code_at_another_path_has_other_ids() -> None:
    here, there = _chunk(), _chunk(path="legacy/" + OWNER_SERVICE)
    assert not {c.id for c in here.chunks} & {c.id for c in there.chunks}


def test_another_repository_only_changes_the_repository_header_line() -> None:
    here, there = _chunk(repo="acme/shop"), _chunk(repo="acme/shop-fork")
    pairs = zip(here.chunks, there.chunks, strict=True)
    assert all(a.text.replace("acme/shop", "acme/shop-fork", 1) == b.text for a, b in pairs)


@pytest.mark.parametrize(("name", "params"), [("find", ("Long",)), ("find", ("String", "int"))])
def test_method_above_the_edit_keeps_id_hash_and_lines(name: str, params: tuple[str, ...]) -> None:
    before, after = _method(_chunk(), name, *params), _method(_chunk(EDITED), name, *params)
    assert (after.id, after.content_hash, after.line_start) == (before.id, before.content_hash, before.line_start)


@pytest.mark.parametrize(
    ("name", "params"), [("update", ("Long", "OwnerDto")), ("delete", ("Long",)), ("normalize", ("String",))]
)
def test_method_below_the_edit_keeps_id_and_hash_and_moves_one_line(name: str, params: tuple[str, ...]) -> None:
    before, after = _method(_chunk(), name, *params), _method(_chunk(EDITED), name, *params)
    assert (after.id, after.content_hash) == (before.id, before.content_hash)
    assert (after.line_start, after.line_end) == (before.line_start + 1, before.line_end + 1)


def test_edited_method_keeps_its_id_and_changes_its_hash() -> None:
    before, after = _method(_chunk(), "create", "OwnerDto"), _method(_chunk(EDITED), "create", "OwnerDto")
    assert after.id == before.id
    assert after.content_hash != before.content_hash


def test_type_chunk_is_unchanged_by_a_body_edit() -> None:
    before = next(c for c in _chunk().chunks if c.qualified_name == SERVICE)
    after = next(c for c in _chunk(EDITED).chunks if c.qualified_name == SERVICE)
    assert (after.id, after.content_hash) == (before.id, before.content_hash)


def test_parts_of_a_split_method_have_distinct_ids() -> None:
    result = chunk_java(SOURCE, OWNER_SERVICE, config=ChunkerConfig(max_chunk_tokens=64))
    parts = [c for c in result.chunks if c.qualified_name == f"{SERVICE}.sortedByName"]
    assert len(parts) > 1
    assert len({c.id for c in parts}) == len(parts)


def test_two_static_initializers_have_distinct_ids() -> None:
    source = "package demo;\nclass A {\n    static int x;\n    static { x = 1; }\n    static { x = 2; }\n}\n"
    inits = [c for c in chunk_java(source).chunks if c.name == "<clinit>"]
    assert len(inits) == 2 and inits[0].id != inits[1].id


def test_two_local_classes_of_one_name_have_distinct_ids() -> None:
    source = (
        "package demo;\nclass A {\n"
        "    void a() { class Helper { void run() {} } }\n"
        "    void b() { class Helper { void run() {} } }\n"
        "}\n"
    )
    result = chunk_java(source)
    helpers = [c for c in result.chunks if c.name in ("Helper", "run")]
    assert len(helpers) == 4
    assert len({c.id for c in result.chunks}) == len(result.chunks)
