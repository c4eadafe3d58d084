"""`@value`: an immutable record for the hot path; `blank`: the cheap way to make a wide one.

Type checkers see a frozen, keyword-only dataclass (PEP 681 `frozen_default`), so assigning to a
field is a mypy error. At run time it is a plain slots dataclass: `frozen=True` sets every field
through `object.__setattr__`, which measured 22 µs against 12 µs for a 40-field `Chunk`, about a
fifth of the pipeline's Python time on java.base.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True, kw_only_default=True)
def value(cls: type[T]) -> type[T]:
    """Make `cls` a keyword-only slots dataclass that type checkers treat as frozen."""
    return dataclass(slots=True, kw_only=True)(cls)


def blank(cls: type[Any]) -> Callable[[], Any]:
    """A maker of instances of the `@value` class `cls` with only their defaulted fields set, for a hot path to fill.

    CPython 3.11 compiles a call with more than 15 keyword arguments into building a dict that the
    callee unpacks again, then binds each keyword by scanning the parameter names: a 37-keyword
    `Chunk(...)` costs about 28,000 instructions, this instance with its fields then set one by one
    (`chunk.name = ...`, a slot store each) under 2,000 (docs/performance.md). The instance is `Any` to
    the type checker, so what fills it is checked by the tests, not by mypy: a field without a default
    left unset raises `AttributeError` when read (a slot), a defaulted one keeps its default, as with the
    constructor. The maker is generated once from the fields, as `dataclass` generates `__init__`.
    """
    env: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = ["def make():", "    self = new(cls)"]
    for f in fields(cls):
        if f.default is not MISSING:
            env[f"default_{f.name}"] = f.default
            lines.append(f"    self.{f.name} = default_{f.name}")
        elif f.default_factory is not MISSING:
            env[f"factory_{f.name}"] = f.default_factory
            lines.append(f"    self.{f.name} = factory_{f.name}()")
    lines.append("    return self")
    exec("\n".join(lines), env)  # generated from the class's own fields, as `dataclass` generates `__init__`
    make: Callable[[], Any] = env["make"]
    return make
