"""docs/configuration.md, generated from the `Settings` model so the reference cannot drift from the code.

Every field of `Settings`, nested models included, becomes one row: its environment variable
(`JAVAKB_` + the path joined with `__`), type, default and description. `scripts/settings_doc` writes
the file; `tests/app/test_settings_doc.py` fails when the committed file is not what this renders.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from app.core.env_names import ENV_PREFIX, KNOWN, NESTED
from app.core.settings import Settings

HEADER = """# Configuration

<!-- Generated from app/core/settings.py by scripts/settings_doc: edit the Settings model, not this file. -->

Every setting is an environment variable with the prefix `JAVAKB_`; nested settings join their path
with `__` (`JAVAKB_WORKER__MAX_JOBS`). Lists and token lists are JSON (`["acme/", "tools/"]`). Secrets
(type `secret`) are never logged; outside `JAVAKB_DEV_MODE` the service refuses to start with a
placeholder or a secret shorter than 16 characters. In the Helm chart, non-secret settings go in
`config` and secrets in the Secret named by `secrets.existingSecret` (docs/deploy-kubernetes.md).
"""


@dataclass(frozen=True, slots=True)
class Row:
    """One setting as documented."""

    variable: str
    type: str
    default: str
    description: str


def rows(model: type[BaseModel] = Settings, prefix: str = ENV_PREFIX) -> Iterator[tuple[str, list[Row]]]:
    """The settings by section: top-level fields first, then one section per nested model."""
    top: list[Row] = []
    nested: list[tuple[str, type[BaseModel], FieldInfo]] = []
    for name, field in model.model_fields.items():
        sub = _model_of(field.annotation)
        if sub is not None:
            nested.append((name, sub, field))
        else:
            top.append(_row(prefix + name.upper(), field))
    yield "General", top
    for name, sub, field in nested:
        section = prefix + name.upper() + NESTED
        yield (
            f"`{section}*`: {field.description or sub.__doc__ or name}",
            list(_flat_rows(sub, section)),
        )


def _flat_rows(model: type[BaseModel], prefix: str) -> Iterator[Row]:
    """A section's rows: a model nested in it (`QdrantSettings.index_build`) as its own variables."""
    for name, field in model.model_fields.items():
        sub = _model_of(field.annotation)
        if sub is None:
            yield _row(prefix + name.upper(), field)
        else:
            yield from _flat_rows(sub, prefix + name.upper() + NESTED)


def render() -> str:
    """The whole of docs/configuration.md."""
    out = [HEADER]
    for title, section in rows():
        out += [f"\n## {_first_line(title)}\n", "| variable | type | default | meaning |", "| --- | --- | --- | --- |"]
        out += [f"| `{r.variable}` | {r.type} | {r.default} | {_cell(r.description)} |" for r in section]
    return "\n".join(out) + "\n"


def undocumented(model: type[BaseModel] = Settings, prefix: str = ENV_PREFIX) -> list[str]:
    """Variables whose field has no description."""
    return [r.variable for _, section in rows(model, prefix) for r in section if not r.description]


def _row(variable: str, field: FieldInfo) -> Row:
    return Row(variable, _type_name(field.annotation), _default(field), field.description or "")


def _model_of(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        names = [_type_name(a) for a in get_args(annotation) if a is not type(None)]
        return " or ".join(names)
    if origin in (list, tuple, set, frozenset):
        return "JSON list"
    if annotation is SecretStr:
        return "secret"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value: Any = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, list | tuple):
        return f"`{json.dumps(list(value))}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].rstrip(".")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def chart_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The Helm chart's values.schema.json with `$defs.settingName` set to every setting's variable.

    `config` and `secrets.values` accept only these names: a misspelt key fails `helm install` instead of
    being ignored.
    """
    names = {"type": "string", "enum": sorted(KNOWN)}
    return schema | {"$defs": schema.get("$defs", {}) | {"settingName": names}}


def main() -> None:
    """Print the document (`scripts/settings_doc` writes it to docs/configuration.md); `--chart SCHEMA`: rewrite it."""
    if sys.argv[1:2] == ["--chart"]:
        path = Path(sys.argv[2])
        path.write_text(json.dumps(chart_schema(json.loads(path.read_text("utf-8"))), indent=2) + "\n", "utf-8")
        return
    print(render(), end="")


if __name__ == "__main__":  # pragma: no cover
    main()
