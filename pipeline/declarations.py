"""Type declarations of a compilation unit: names, nesting, supertypes, fields and Spring role.

Everything here is read once per type and shared by the type's own chunk and its members' chunks.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline._values import value
from pipeline.model import SymbolType
from pipeline.outline import TYPE_NODE_KINDS, Field, Modifiers, TypeDecl
from pipeline.spring import BEAN_STEREOTYPES, route_prefixes, stereotype_of


@value
class TypeInfo:
    """One named type declaration."""

    decl: TypeDecl
    kind: SymbolType
    name: str
    nested_name: str  # Outer.Inner, without the package
    modifiers: Modifiers
    stereotype: str | None
    route_prefixes: tuple[str, ...]
    extends: tuple[str, ...]
    implements: tuple[str, ...]
    fields: tuple[Field, ...]

    @property
    def is_bean(self) -> bool:
        """Whether Spring or CDI creates instances of this type (so constructors are injection points)."""
        return self.stereotype in BEAN_STEREOTYPES

    @property
    def may_be_bean(self) -> bool:
        """A class of no known role with type-level annotations: a bean if one is a stereotype the index defines."""
        return self.kind is SymbolType.CLASS and self.stereotype is None and bool(self.modifiers.annotations)

    @property
    def field_types(self) -> dict[str, str]:
        """Field name to declared simple type."""
        return {f.name: f.type for f in self.fields}


def find_types(decls: list[TypeDecl]) -> Iterator[TypeInfo]:
    """The type declarations of a file's outline, in the same order (outer before inner)."""
    for decl in decls:
        kind = TYPE_NODE_KINDS[decl.kind]
        modifiers = decl.modifiers
        yield TypeInfo(
            decl=decl,
            kind=kind,
            name=decl.name,
            nested_name=decl.nested_name,
            modifiers=modifiers,
            stereotype=stereotype_of(modifiers, (*decl.extends, *decl.implements), kind is SymbolType.INTERFACE),
            route_prefixes=route_prefixes(modifiers),
            extends=decl.extends,
            implements=decl.implements,
            fields=decl.fields,
        )


def declared_types(types: list[TypeInfo], package: str) -> dict[str, str]:
    """Simple and nested names of the file's own types mapped to their fully qualified names."""
    declared: dict[str, str] = {}
    for info in types:
        fq = f"{package}.{info.nested_name}" if package else info.nested_name
        declared.setdefault(info.name, fq)  # outer types come first, so they win a name clash
    return declared
