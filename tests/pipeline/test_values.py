"""`pipeline._values.blank`: an instance filled by attribute is the instance the constructor makes."""

from __future__ import annotations

from dataclasses import field
from typing import Any

import pytest

from pipeline._values import blank, value
from pipeline.model import Chunk, SymbolType


@value
class _Sample:
    required: str
    number: int = 3
    names: tuple[str, ...] = ()
    table: dict[str, str] = field(default_factory=dict)


def test_a_blank_has_the_defaults_and_no_required_field() -> None:
    made = blank(_Sample)()
    assert (made.number, made.names, made.table) == (3, (), {})
    with pytest.raises(AttributeError):
        _ = made.required  # left unset: reading it fails, as a missing keyword would


def test_a_default_factory_is_called_for_each_blank() -> None:
    make = blank(_Sample)
    first, second = make(), make()
    first.table["a"] = "b"
    assert second.table == {}


def test_a_filled_blank_equals_the_constructed_value() -> None:
    chunk = blank(Chunk)()
    fields: dict[str, Any] = {
        "id": "i", "repo_path": "r", "gitlab_project_id": 7, "commit_sha": None, "branch": "main", "file_path": "A",
        "package": "p", "qualified_name": "p.A.f", "symbol_type": SymbolType.METHOD, "name": "f", "signature": "f()",
        "enclosing_type": "p.A", "calls": ("A.g",), "line_start": 1, "line_end": 2, "content_hash": "h", "code": "c",
        "text": "t",
    }  # fmt: skip
    for name, given in fields.items():
        setattr(chunk, name, given)
    assert chunk == Chunk(**fields)
    assert type(chunk) is Chunk
