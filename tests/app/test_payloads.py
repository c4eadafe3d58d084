"""The stored payload, declared once (`app.store.payloads`): what is written, and the typed view read back.

The writer's output is pinned to a payload recorded before the view existed
(`tests/fixtures/answers/payload_find.json`): the same keys, values and `payload_hash`, so points
written by an older version are not rewritten and read the same. A change of the chunk's declared
fields is a change of that contract: record the file again and say so in docs/decisions.md.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any, Final

import pytest

from app.core.errors import StorageError
from app.store.payloads import (
    NOT_STORED,
    PAYLOAD_FIELDS,
    STORED_TEXT,
    StoredChunk,
    StoreKeys,
    read,
    read_fields,
    stored_payload,
)
from pipeline.model import Chunk, SymbolType
from tests.support.java import chunk_java, only
from tests.support.shop import chunk_shop

ROOT: Final = Path(__file__).resolve().parents[2]
RECORDED: Final = ROOT / "tests" / "fixtures" / "answers" / "payload_find.json"
AT: Final = "2025-01-02T03:04:05+00:00"
DROP: Final = object()
SOURCE: Final = """\
package demo;
@RestController
class A {
  /** Finds. */
  @GetMapping("/a/{id}")
  String find(Long id) { return "x"; }
}
"""


def find_chunk() -> Chunk:
    return only(chunk_java(SOURCE, "src/main/java/demo/A.java", repo="acme/shop"), "demo.A.find")


def test_the_written_payload_is_the_one_written_before_the_view() -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))

    payload = stored_payload(find_chunk(), AT)

    assert payload == recorded
    assert list(payload) == list(PAYLOAD_FIELDS)  # every key written is declared, in the declared order


def test_the_payload_is_the_chunk_without_its_text_plus_the_store_keys() -> None:
    chunk_fields = [f.name for f in dataclasses.fields(Chunk) if f.name not in NOT_STORED]
    store_fields = [f.name for f in dataclasses.fields(StoreKeys)]

    assert list(PAYLOAD_FIELDS) == chunk_fields + store_fields
    assert {"text"} == NOT_STORED


def test_every_shop_chunk_reads_back_as_written() -> None:
    chunks = chunk_shop().chunks
    assert len(chunks) > 100

    for chunk in chunks:
        stored = StoredChunk.from_payload(json.loads(json.dumps(stored_payload(chunk, AT))))  # as Qdrant returns it
        assert stored.chunk == dataclasses.replace(chunk, text=STORED_TEXT)
        assert stored.keys.indexed_at == AT
        assert stored.keys.repo_prefixes[-1] == chunk.repo_path
        assert stored.keys.path_prefixes[-1] == chunk.file_path
        assert isinstance(stored.chunk.symbol_type, SymbolType)


def older(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload as an older version wrote it: only the fields that have no declared default."""
    required = {f.name for f in dataclasses.fields(Chunk) if f.default is dataclasses.MISSING}
    return {key: value for key, value in payload.items() if key in required}


def test_an_older_point_reads_with_the_declared_defaults() -> None:
    chunk = find_chunk()

    stored = StoredChunk.from_payload(older(stored_payload(chunk, AT)))

    for f in dataclasses.fields(Chunk):
        if f.default is not dataclasses.MISSING:
            assert getattr(stored.chunk, f.name) == f.default, f.name
    assert stored.chunk.qualified_name == chunk.qualified_name
    assert stored.keys == StoreKeys()  # no payload hash: the next write of its file rewrites it
    assert read({}, "part_count") == 1
    assert read({"parameter_types": ["Long"]}, "parameter_types") == ("Long",)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"qualified_name": DROP}, "no qualified_name"),
        ({"symbol_type": "macro"}, "symbol_type is not what this service writes"),
        ({"calls": 7}, "calls is not what this service writes"),
    ],
)
def test_a_point_this_service_did_not_write_is_a_storage_error(change: dict[str, Any], message: str) -> None:
    payload = {**stored_payload(find_chunk(), AT), **change}
    payload = {key: value for key, value in payload.items() if value is not DROP}

    with pytest.raises(StorageError, match=message):
        StoredChunk.from_payload(payload)


def test_reading_an_undeclared_key_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        read({"text": "x"}, "text")
    with pytest.raises(KeyError):
        read_fields({"text": "x"}, ["file_path", "text"])


def test_several_keys_read_as_each_alone() -> None:
    payload = older(stored_payload(find_chunk(), AT))
    names = ["repo_path", "line_start", "part_index", "parameter_types", "payload_hash"]

    assert read_fields(payload, names) == tuple(read(payload, name) for name in names)
    with pytest.raises(StorageError, match="no file_path"):
        read_fields({}, ["file_path"])


# --- no reader goes around the view --------------------------------------------------------------------------------

SOURCES: Final = sorted(
    p
    for package in ("entry", "app", "hooks", "mcp_server")
    for p in (ROOT / package).glob("**/*.py")
    if p != ROOT / "app" / "store" / "payloads.py"
)


def payload_reads(tree: ast.AST) -> list[str]:
    """`.get("field")` and `["field"]` of a payload field on anything named or taken from a `payload`."""
    aliases = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and "payload" in ast.unparse(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            receiver, key = node.func.value, node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            receiver, key = node.value, node.slice
        else:
            continue
        if not (isinstance(key, ast.Constant) and key.value in PAYLOAD_FIELDS):
            continue
        text = ast.unparse(receiver)
        if "payload" in text or text in aliases:
            found.append(f"{text}[{key.value!r}]")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_payloads_are_read_only_through_the_view(path: Path) -> None:
    assert payload_reads(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_scanner_sees_payload_reads() -> None:
    sample = ast.parse(
        'a = hit.payload.get("stereotype")\np = record.payload or {}\nb = p.get("code", "")\nc = p["part_count"]\n'
        'd = headers.get("code")\ne = payload.get("unknown")'
    )
    assert payload_reads(sample) == [
        "hit.payload['stereotype']",
        "p['code']",
        "p['part_count']",
    ]
