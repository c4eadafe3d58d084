"""The Edge store's small JSON files: `StampedJson` parses the alias file again only when it changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.store import json_files
from app.store.edge import ALIASES, EdgeStore
from app.store.json_files import StampedJson, read_json, write_json
from app.store.vectors import IndexModel


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files `read_json` parsed, in order."""
    done: list[Path] = []

    def counted(path: Path) -> dict[str, object] | None:
        done.append(path)
        return read_json(path)

    monkeypatch.setattr(json_files, "read_json", counted)
    return done


def test_an_unchanged_file_is_parsed_once(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "aliases.json"
    write_json(path, {"code": "code_1"})
    stamped = StampedJson(path)

    assert [stamped.read() for _ in range(3)] == [{"code": "code_1"}] * 3
    assert reads == [path]


def test_a_file_replaced_by_another_writer_is_read_again(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "aliases.json"
    write_json(path, {"code": "code_1"})
    stamped = StampedJson(path)
    assert stamped.read() == {"code": "code_1"}

    write_json(path, {"code": "code_2"})  # the same size: a new file all the same

    assert stamped.read() == {"code": "code_2"}
    assert len(reads) == 2


def test_a_missing_or_removed_file_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "aliases.json"
    stamped = StampedJson(path)
    assert stamped.read() is None

    write_json(path, {"code": "code_1"})
    assert stamped.read() == {"code": "code_1"}
    path.unlink()
    assert stamped.read() is None


def test_forget_reads_the_file_again(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "aliases.json"
    write_json(path, {"code": "code_1"})
    stamped = StampedJson(path)
    stamped.read()

    stamped.forget()
    stamped.read()

    assert reads == [path, path]


async def test_the_store_follows_its_own_alias_switches_and_another_writers(tmp_path: Path) -> None:
    store = EdgeStore(str(tmp_path), "code")
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        first = await store.target()
        second = await store.create_generation(IndexModel(embedding_model=None, dimension=None))

        await store.switch_alias(second)
        assert await store.target() == second

        write_json(tmp_path / ALIASES, {"code": first})  # written by another process
        assert await store.target() == first
    finally:
        await store.close()
