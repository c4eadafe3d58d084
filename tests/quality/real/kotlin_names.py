"""The names a Kotlin source declares, read with regular expressions: the typo check of hand-written answers.

Not a parser and not the indexer's reader (`pipeline.kotlin`): a question's answers over Kotlin code are
written by hand (`tests/quality/kotlin/`), and this only says whether each name is declared at all. It
over-approximates on purpose: every `fun`, `val` or `var` of a file counts as a member of every type the
file declares and of the file's facade class (`<File>Kt`, where top-level functions go), and a type whose
name is followed by `(` (after its type parameters) declares a primary constructor (`Type.Type`). So a
misspelt name or package is caught; a member written under the wrong type of the same file is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

_PACKAGE: Final = re.compile(r"^\s*package\s+([\w.]+)", re.MULTILINE)
_TYPE: Final = re.compile(r"\b(?:class|interface|object)\s+([A-Za-z_]\w*)\s*(?:<[^>{(]*>)?\s*(\()?")
_COMPANION: Final = re.compile(r"\bcompanion\s+object\b(?:\s+([A-Za-z_]\w*))?")
_FUN: Final = re.compile(r"\bfun\s+(?:<[^>]*>\s*)?(?:[\w.<>?, ]+\.)?([A-Za-z_]\w*)\s*\(")
_PROPERTY: Final = re.compile(r"\b(?:val|var)\s+([A-Za-z_]\w*)")
_COMMENT: Final = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


@dataclass(frozen=True, slots=True)
class KotlinType:
    """A declared type (or file facade): its qualified name and the qualified names of its members."""

    qualified_name: str
    name: str
    members: tuple[str, ...]


def declared(file_path: str, text: str) -> list[KotlinType]:
    """The types of one Kotlin file, each with every member name of the file (see the module docstring)."""
    text = _COMMENT.sub(" ", text)
    found = _PACKAGE.search(text)
    package = found.group(1) + "." if found else ""
    members = sorted({m.group(1) for pattern in (_FUN, _PROPERTY) for m in pattern.finditer(text)})
    types = [(m.start(), package + m.group(1), m.group(2) is not None) for m in _TYPE.finditer(text)]
    types = [t for t in types if not text[max(0, t[0] - 10) : t[0]].rstrip().endswith("companion")]
    names = {qualified: constructor for _, qualified, constructor in types}  # -> has a primary constructor
    for match in _COMPANION.finditer(text):
        owner = next((q for start, q, _ in reversed(types) if start < match.start()), None)  # the type it is in
        if owner is not None:
            names[f"{owner}.{match.group(1) or 'Companion'}"] = False
    names[package + PurePosixPath(file_path).stem + "Kt"] = False
    return [
        KotlinType(qualified, qualified.rsplit(".", 1)[-1], _members(qualified, members, constructor))
        for qualified, constructor in names.items()
    ]


def _members(qualified: str, members: list[str], constructor: bool) -> tuple[str, ...]:
    own = [f"{qualified}.{m}" for m in members]
    return tuple([f"{qualified}.{qualified.rsplit('.', 1)[-1]}", *own] if constructor else own)
