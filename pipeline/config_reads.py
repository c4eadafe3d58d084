"""The configuration keys Java code reads (issue 29): `@Value`, `@ConfigurationProperties`, `Environment.getProperty`.

A type's chunk gets its `@Value` fields and, for a `@ConfigurationProperties(prefix)` class, the prefix and
the key of each instance field (`key_of_field`); a method's chunk gets the `@Value` of its parameters, the
prefix of a `@ConfigurationProperties` `@Bean` method, and the literal keys its body reads through
`getProperty` / `getRequiredProperty`. Each read is a `ConfigEntry`; `keyed` gives a chunk's two fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pipeline.config_keys import ConfigEntry, Use, canonical_key, key_of_field, masked, placeholders
from pipeline.outline import Annotation, Field

_BINDS = "ConfigurationProperties"
_VALUE_TEXT = re.compile(r'@(?:[\w.]+\.)?Value\(\s*(?:value\s*=\s*)?"((?:[^"\\]|\\.)*)"')
# `env.getProperty("a.b")`, `environment.getRequiredProperty(...)`, `getEnvironment().getProperty(...)`: a
# receiver named for Spring's `Environment`; `System.getProperty` and `Properties.getProperty` are not it.
_GET_PROPERTY = re.compile(
    r'(?:\b\w*[eE]nv(?:ironment)?\w*|getEnvironment\(\s*\))\s*\.\s*get(?:Required)?Property\(\s*"([^"\\]+)"'
)
FILE_MARKERS = (b"@Value", b"Property(", b"ConfigurationProperties")  # `Property(`: `getProperty(`
"""A Java file mentions none of these: it reads no configuration, and nothing here runs for it."""


def reads_config(data: bytes) -> bool:
    """Whether a file may read configuration (a cheap test on its bytes before any member is looked at)."""
    return any(marker in data for marker in FILE_MARKERS)


def type_reads(annotations: Sequence[Annotation], fields: Iterable[Field]) -> list[ConfigEntry]:
    """A type's reads: its fields' `@Value`s, and a `@ConfigurationProperties` class's prefix and fields."""
    found: list[ConfigEntry] = []
    fields = tuple(fields)
    for f in fields:
        for a in f.modifiers.annotations:
            if a.name == "Value":
                found.extend(_values(a))
    prefix = next((_prefix(a) for a in annotations if a.name == _BINDS), None)
    if prefix is not None:
        found.append(ConfigEntry(use=Use.BIND, key=prefix))
        found.extend(
            ConfigEntry(use=Use.BIND, key=key_of_field(prefix, f.name), value=f.name)
            for f in fields
            if "static" not in f.modifiers.keywords
        )
    return found


def member_reads(annotations: Sequence[Annotation], code: str) -> list[ConfigEntry]:
    """A method's reads: a `@ConfigurationProperties` `@Bean`'s prefix, `@Value` parameters, `getProperty("key")`."""
    found = [ConfigEntry(use=Use.BIND, key=p) for a in annotations if a.name == _BINDS and (p := _prefix(a))]
    for match in _VALUE_TEXT.finditer(code):
        found.extend(_entries(match.group(1)))
    found.extend(ConfigEntry(use=Use.GET, key=m.group(1)) for m in _GET_PROPERTY.finditer(code))
    return found


def keyed(entries: Sequence[ConfigEntry]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A chunk's `config_keys` and `config` fields from its entries (each once, in order)."""
    if not entries:
        return (), ()
    keys = tuple(dict.fromkeys(canonical_key(e.key) for e in entries))
    return keys, tuple(dict.fromkeys(e.encode() for e in entries))


def _values(annotation: Annotation) -> list[ConfigEntry]:
    found: list[ConfigEntry] = []
    for v in annotation.values("value"):
        found.extend(_entries(v.string))
    return found


def _entries(expression: str) -> list[ConfigEntry]:
    """`${a.b:default}` (nested placeholders too) as `value` entries, a secret key's default masked."""
    found = placeholders(expression)
    return [ConfigEntry(use=Use.VALUE, key=key, value=masked(key, default)) for key, default in found]


def _prefix(annotation: Annotation) -> str:
    values = annotation.values("prefix", "value")
    return values[0].string.strip() if values else ""
