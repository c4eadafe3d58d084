"""The names Java calls Kotlin declarations by (kotlinc's JVM names), the one place the rules are written.

A property `name` is read through `getName()` and written through `setName(...)`; a property whose name
starts with `is` and a capital (`isActive`) keeps it for its getter and drops it for its setter
(`setActive`). `@get:JvmName("x")`, `@set:JvmName("y")` and a function's `@JvmName("z")` rename them;
`@JvmField` and `const val` are fields, read without a call. The index keeps calls under these JVM
names on both sides (a Kotlin `owner.name` is recorded as `Owner.getName`), so the query side maps a
Kotlin name to them (`app.search.lookups.call_keys`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_JVM_NAME = re.compile(r'^@(?:(get|set):)?JvmName\(\s*(?:name\s*=\s*)?"([^"]+)"\s*\)$')
_ACCESSOR = re.compile(r"^(?:get|set)[A-Z0-9_]")
JVM_NAME = "JvmName"
"""The annotation (simple name, as chunks list it) that renames a Kotlin declaration for Java."""
FIELD_MARKS = frozenset({"@JvmField"})
"""Annotations that make a Kotlin property a plain field for Java: no getter or setter is called."""


def _capitalized(name: str) -> str:
    return name[:1].upper() + name[1:]


def getter_name(prop: str) -> str:
    """`name` → `getName`, `isActive` → `isActive` (kotlinc's rule for a property's getter)."""
    return prop if _is_prefixed(prop) else f"get{_capitalized(prop)}"


def setter_name(prop: str) -> str:
    """`name` → `setName`, `isActive` → `setActive`."""
    return f"set{prop[2:]}" if _is_prefixed(prop) else f"set{_capitalized(prop)}"


def _is_prefixed(prop: str) -> bool:
    return len(prop) > 2 and prop.startswith("is") and not prop[2].islower()


def is_accessor_name(name: str) -> bool:
    """`getName`, `setName`: an accessor's name, no Kotlin property's (`isActive` is both: its getter's and its own)."""
    return bool(_ACCESSOR.match(name))


def jvm_names(name: str, *, is_property: bool, annotations: Iterable[str] = (), const: bool = False) -> tuple[str, ...]:
    """The names Java calls a Kotlin function or property by, the Kotlin name's accessors first.

    A function is called by its name, or its `@JvmName`; a property by its getter and setter (renamed by
    `@get:JvmName` / `@set:JvmName`), none when it is a field (`@JvmField`, `const`).
    """
    renamed: dict[str | None, str] = {}
    marks = tuple(annotations)
    for each in marks:
        found = _JVM_NAME.match(each.strip())
        if found is not None:
            renamed[found.group(1)] = found.group(2)
    if not is_property:
        return (renamed.get(None, name),)
    if const or FIELD_MARKS.intersection(marks):
        return ()
    return (renamed.get("get", getter_name(name)), renamed.get("set", setter_name(name)))


def file_jvm_name(annotations: Iterable[str]) -> str | None:
    """The facade class a `@file:JvmName("Names")` names (its argument, as `jvm_names` reads it), if any."""
    for each in annotations:
        found = _JVM_NAME.match(each.strip())
        if found is not None and found.group(1) is None:
            return found.group(2)
    return None
