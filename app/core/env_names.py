"""Which `JAVAKB_*` environment variables a setting reads, derived from the `Settings` model, and the misspelt rest.

pydantic-settings ignores a variable no field reads (one `_` where the nesting `__` was meant), so
a misspelt setting silently keeps its default. The names are derived from the model itself (its
`env_prefix`, its `env_nested_delimiter` and every field, nested models included); `OTHER_VARIABLES`
is the one declared list of `JAVAKB_*` variables the project reads that are not settings. The
service warns at start (`javakb serve`, `web`, `worker`) and `javakb doctor` reports them.
"""

from __future__ import annotations

import difflib
import itertools
import logging
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Union, get_args, get_origin

from pydantic import BaseModel

from app.core.settings import Settings

ENV_PREFIX: Final = str(Settings.model_config.get("env_prefix", "")).upper()
NESTED: Final = str(Settings.model_config.get("env_nested_delimiter") or "__")
SCOPE_SETTING: Final = f"{ENV_PREFIX}CHUNKING{NESTED}INCLUDE"
"""The variable of `ChunkingSettings.include`: which files are in scope, named where none is."""

OTHER_VARIABLES: Final = frozenset(
    {
        "JAVAKB_TEST_POSTGRES",  # tests/conftest.py: the PostgreSQL server the tests use
        "JAVAKB_TEST_REDIS",  # tests/conftest.py: the Redis the tests use
        "JAVAKB_RECORD_ANSWERS",  # tests/mcp_server/test_answers.py: re-record the expected answers
        "JAVAKB_QUALITY_MIRRORS",  # tests/quality/real: where the public repositories are mirrored
        "JAVAKB_QUALITY_VENV",  # scripts/embedding_server: the virtualenv of the quality runs
        "JAVAKB_IMAGE",  # docker-compose.yml: the image to run
        "JAVAKB_TOKEN",  # docs/cursor.md: the client's own bearer token, read by Cursor, not by us
    }
)
"""`JAVAKB_*` variables the project reads that are not settings: never reported as misspelt."""

logger = logging.getLogger("app.core.settings")  # where the other start-up checks log


def model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model a field holds (`X` or `X | None`), or None for a plain value or a list."""
    if get_origin(annotation) in (Union, types.UnionType):
        models = [m for a in get_args(annotation) if (m := model_of(a)) is not None]
        return models[0] if len(models) == 1 else None
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def setting_variables(model: type[BaseModel] = Settings, prefix: str = ENV_PREFIX) -> Iterator[str]:
    """Every variable a setting reads: each field, and a nested model as a whole (JSON) and field by field."""
    for name, field in model.model_fields.items():
        variable = prefix + name.upper()
        yield variable
        sub = model_of(field.annotation)
        if sub is not None:
            yield from setting_variables(sub, variable + NESTED)


KNOWN: Final = frozenset(setting_variables())


def unknown_variables(environ: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """Each `JAVAKB_*` variable no setting reads, with the nearest setting's name (None when none is near)."""
    known = sorted(v.removeprefix(ENV_PREFIX) for v in KNOWN)  # the shared prefix would make anything look near
    found = []
    for name in sorted(environ):
        upper = name.upper()  # pydantic-settings matches names case-insensitively
        if upper.startswith(ENV_PREFIX) and upper not in KNOWN and upper not in OTHER_VARIABLES:
            nearest = difflib.get_close_matches(upper.removeprefix(ENV_PREFIX), known, n=1, cutoff=0.6)
            found.append((name, ENV_PREFIX + nearest[0] if nearest else None))
    return found


def unknown_warnings(environ: Mapping[str, str]) -> list[str]:
    """One sentence per misspelt or unknown variable, naming the setting it probably meant."""
    return [
        f"{name} is not a setting and is ignored"
        + (f": did you mean {nearest}?" if nearest else " (every setting: docs/configuration.md)")
        for name, nearest in unknown_variables(environ)
    ]


def warn_unknown(environ: Mapping[str, str]) -> None:
    """Log each unknown variable at WARNING (the service's start)."""
    for warning in unknown_warnings(environ):
        logger.warning("%s", warning)


def invalid_settings(errors: Sequence[Mapping[str, Any]]) -> str:
    """A `ValidationError`'s errors as the variables to fix: `JAVAKB_WORKER__MAX_JOBS='four': <why>`.

    Secrets' inputs arrive hidden already (`app.core.secret_errors`). A list element's index is not a
    variable of its own: the message names the list's variable.
    """
    parts = []
    for error in errors:
        path = list(itertools.takewhile(lambda p: isinstance(p, str), error["loc"]))
        variable = ENV_PREFIX + NESTED.join(path).upper() if path else "the configuration"
        value = error.get("input")
        shown = f"={value!r}" if isinstance(value, str | int | float | bool) else ""
        parts.append(f"{variable}{shown}: {error['msg']}")
    return "; ".join(parts) + " (fix or unset it; every setting: docs/configuration.md)"
