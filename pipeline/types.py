"""Type names: simple names from type nodes and fully qualified names from imports.

Resolution is what the file itself makes knowable (JLS 6.5.5): the types it declares, its
single-type imports, its own package for names that are declared there, and `java.lang`.
Wildcard imports make a name ambiguous, so it stays unresolved rather than guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from types import MappingProxyType

from pipeline._values import value
from pipeline.outline import Import

JAVA_LANG = frozenset(
    [
        "Object",
        "String",
        "StringBuilder",
        "StringBuffer",
        "Math",
        "StrictMath",
        "System",
        "Thread",
        "Runnable",
        "Integer",
        "Long",
        "Short",
        "Byte",
        "Character",
        "Boolean",
        "Double",
        "Float",
        "Number",
        "Enum",
        "Record",
        "Iterable",
        "Comparable",
        "CharSequence",
        "Class",
        "ClassLoader",
        "Exception",
        "RuntimeException",
        "Error",
        "Throwable",
        "IllegalArgumentException",
        "IllegalStateException",
        "NullPointerException",
        "UnsupportedOperationException",
        "IndexOutOfBoundsException",
        "ArithmeticException",
        "ClassCastException",
        "InterruptedException",
        "CloneNotSupportedException",
        "AutoCloseable",
        "Void",
        "Process",
        "Runtime",
        "ThreadLocal",
        "SecurityException",
        "NumberFormatException",
        "ReflectiveOperationException",
        "Deprecated",
        "Override",
        "SuppressWarnings",
        "FunctionalInterface",
        "SafeVarargs",
    ]
)
_EMPTY: Mapping[str, str] = MappingProxyType({})


def scoped_name(written: str) -> str:
    """`java.util.Map.Entry` → `Map.Entry`: keep the enclosing type of a nested one, drop a package."""
    parts = [p.strip() for p in written.split(".")]
    while len(parts) > 1 and parts[0][:1].islower():
        parts.pop(0)
    return ".".join(parts)


@value
class Imports:
    """Everything a file makes knowable about type names."""

    package: str = ""
    explicit: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    static_members: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    declared: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    has_wildcards: bool = False
    aliases: Mapping[str, str] = field(default_factory=lambda: _EMPTY)  # Kotlin's `import a.Owner as O`: O → Owner

    def unaliased(self, name: str) -> str:
        """A simple or dotted name with an import alias at its head written as the name it stands for."""
        if not self.aliases:
            return name
        head, dot, rest = name.partition(".")
        return self.aliases.get(head, head) + dot + rest

    def resolve(self, name: str) -> str | None:
        """Fully qualified name for a simple or dotted type name, when the file makes it knowable."""
        if not name:
            return None
        if name.endswith("[]"):  # `Predicate[]::new`: the element type decides
            element = self.resolve(name[:-2])
            return f"{element}[]" if element else None
        head, _, rest = name.partition(".")
        if head[:1].islower():
            return name if rest else None  # already qualified (com.acme.X) or a primitive
        for table in (self.declared, self.explicit):
            fq = table.get(head)
            if fq is not None:
                return f"{fq}.{rest}" if rest else fq
        if head in JAVA_LANG and not rest:
            return f"java.lang.{head}"
        if _looks_like_type_variable(head):
            return None  # `T`, `E`, `K2`: a type parameter, not a class of the package
        if self.has_wildcards:
            return None  # could come from any of the wildcard imports
        # Not imported and not declared here: javac would look in the file's own package.
        qualified = f"{self.package}.{name}" if self.package else name
        return qualified


def _looks_like_type_variable(name: str) -> bool:
    # Java's naming convention for type parameters (JLS 6.1): one capital letter, maybe digits.
    return name[:1].isupper() and (len(name) == 1 or name[1:].isdigit())


def with_aliases(imports: Imports, aliases: Mapping[str, str]) -> Imports:
    """Kotlin's aliased imports (`import com.acme.Owner as O`: alias → qualified name) added to a file's imports.

    The alias resolves as a single-type import; what a chunk shows by simple name (`calls`, `injects`) is
    written with the name it stands for (`unaliased`), as every other file writes it.
    """
    if not aliases:
        return imports
    explicit = {**imports.explicit, **aliases}
    shown = {alias: fq.rsplit(".", 1)[-1] for alias, fq in aliases.items()}
    return replace(imports, explicit=MappingProxyType(explicit), aliases=MappingProxyType(shown))


def read_imports(imports: Iterable[Import], declared: Mapping[str, str], package: str) -> Imports:
    """Collect the package's single-type and static imports of a compilation unit."""
    explicit: dict[str, str] = {}
    static_members: dict[str, str] = {}
    wildcards = False
    for each in imports:
        if each.wildcard:
            wildcards = True
        elif each.static:
            static_members[each.name.rsplit(".", 1)[-1]] = each.name
        else:
            explicit[each.name.rsplit(".", 1)[-1]] = each.name
    return Imports(
        package=package,
        explicit=MappingProxyType(explicit),
        static_members=MappingProxyType(static_members),
        declared=MappingProxyType(dict(declared)),
        has_wildcards=wildcards,
    )
