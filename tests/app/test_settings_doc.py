"""docs/configuration.md is generated from the Settings model: stale or undocumented settings fail here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from app.core.settings import Settings
from app.core.settings_doc import render, rows, undocumented

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_committed_document_is_what_the_settings_model_renders() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "run scripts/settings_doc"


def test_every_setting_has_a_description() -> None:
    assert undocumented() == []


def test_every_field_of_the_model_is_a_row_with_its_environment_variable() -> None:
    variables = {r.variable for _, section in rows() for r in section}
    for name, field in Settings.model_fields.items():
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            assert {f"JAVAKB_{name.upper()}__{f.upper()}" for f in sub.model_fields} <= variables | {
                f"JAVAKB_{name.upper()}__{f.upper()}" for f, nested in sub.model_fields.items() if _is_model(nested)
            }
        else:
            assert f"JAVAKB_{name.upper()}" in variables
    assert "JAVAKB_WORKER__HEALTH_PORT" in variables
    assert "JAVAKB_QDRANT__INDEX_BUILD__THRESHOLD" in variables  # a model nested in a section: its own rows
    assert "JAVAKB_QDRANT__INDEX_BUILD" not in variables


def _is_model(field: Any) -> bool:
    return isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)


def test_a_row_shows_type_default_and_description() -> None:
    class Nested(BaseModel):
        """Things."""

        port: int = Field(default=8081, description="Where | it listens")
        token: str | None = Field(default=None, description="Who")
        names: tuple[str, ...] = Field(default=("a",), description="Which")

    class Top(BaseModel):
        nested: Nested = Field(default_factory=Nested)
        flag: bool = Field(default=False)

    sections = dict(rows(Top, "X_"))
    assert [(r.variable, r.type, r.default) for r in sections["General"]] == [("X_FLAG", "bool", "`false`")]
    nested = sections["`X_NESTED__*`: Things."]
    assert [(r.variable, r.type, r.default) for r in nested] == [
        ("X_NESTED__PORT", "int", "`8081`"),
        ("X_NESTED__TOKEN", "str", "unset"),
        ("X_NESTED__NAMES", "JSON list", '`["a"]`'),
    ]
    assert undocumented(Top, "X_") == ["X_FLAG"]
