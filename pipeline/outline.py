"""The outline of a Java file: every fact the chunker reads from the syntax tree, as plain records.

One reader builds it: `pipeline._native` (pipeline/native.py), a C extension that parses the file and
reads the tree through tree-sitter's public C API in one walk. Reading a `Node` property costs 1,700 to
3,800 instructions in py-tree-sitter, and one tree-sitter query walk costs a third of a parse, so a
reader in Python over py-tree-sitter costs 2.9x a bare parse where the C reader costs 2.0x
(docs/performance.md, "One reader, public API only").

Records are named tuples: the C reader allocates them directly (no `__init__` call), and tuples
compare by value. Byte offsets and rows are tree-sitter's (zero-based); -1 stands for "no such node".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from pipeline.model import SymbolType

TYPE_NODE_KINDS: Mapping[str, SymbolType] = MappingProxyType(
    {
        "class_declaration": SymbolType.CLASS,
        "interface_declaration": SymbolType.INTERFACE,
        "enum_declaration": SymbolType.ENUM,
        "record_declaration": SymbolType.RECORD,
        "annotation_type_declaration": SymbolType.ANNOTATION,
    }
)
"""The tree-sitter node kinds of type declarations (`TypeDecl.kind`), and the symbol type of each."""
CONSTRUCTOR_NODE_KINDS = frozenset({"constructor_declaration", "compact_constructor_declaration"})
CALLABLE_NODE_KINDS = frozenset({"method_declaration", *CONSTRUCTOR_NODE_KINDS})
"""The node kinds of methods and constructors (`MemberDecl.kind`)."""
ELEMENT_NODE_KIND = "annotation_type_element_declaration"
"""An annotation type's element (`String value() default ""`): a bodiless method with modifiers and javadoc read."""

EMPTY_ARGS: Mapping[str, tuple[AnnotationValue, ...]] = MappingProxyType({})


class AnnotationValue(NamedTuple):
    """One value of an annotation argument (array elements are values of their own)."""

    text: str  # as written
    string: str  # as a constant string: literals joined, anything else as `${expression}`


class Annotation(NamedTuple):
    """One annotation use: its text as written, its simple name and its arguments by element name.

    The single unnamed argument is under `value` (JLS 9.7.3).
    """

    text: str
    name: str
    args: Mapping[str, tuple[AnnotationValue, ...]] = EMPTY_ARGS

    def values(self, *keys: str) -> tuple[AnnotationValue, ...]:
        """Argument values for the first key present, with arrays flattened."""
        for key in keys:
            found = self.args.get(key)
            if found:
                return found
        return ()


class Modifiers(NamedTuple):
    """Keywords and annotations of a declaration."""

    keywords: tuple[str, ...] = ()
    annotations: tuple[Annotation, ...] = ()

    def has(self, *names: str) -> bool:
        """True when any annotation has one of these simple names."""
        if not self.annotations:
            return False  # most declarations: skip the generator
        return any(a.name in names for a in self.annotations)

    def find(self, *names: str) -> Annotation | None:
        """The first annotation with one of these simple names."""
        return next((a for a in self.annotations if a.name in names), None)


NO_MODIFIERS = Modifiers()


class Param(NamedTuple):
    """A formal or varargs parameter (and a record component)."""

    kind: str  # formal_parameter or spread_parameter
    type: str  # as a signature shows it: `Map<K, V>`, `String...`
    name: str
    simple: str  # simple name of the declared type ("" for varargs, whose type is not a field)
    type_arg: str | None  # simple name of the sole type argument of a generic type, else None
    modifiers: Modifiers


class Field(NamedTuple):
    """A field (one per declarator) or a record component."""

    name: str
    type: str  # simple name
    type_arg: str | None  # as in `Param`
    modifiers: Modifiers
    has_initializer: bool


class MemberDecl(NamedTuple):
    """A named child of a type body (enum body declarations flattened): member, comment or anything else.

    Only methods, constructors and static initializers fill the callable fields; an enum constant
    fills `name`, its body and `members` (the methods of its body). `head` is "" for comments and
    static initializers, which a skeleton does not quote. A static initializer has no name (""): what
    the chunks call it, and every signature, is written by `pipeline.members` from these facts.
    """

    kind: str  # the node type
    start: int
    end: int
    start_row: int
    end_row: int
    has_error: bool
    outside_error: bool  # an error outside the `body` field: what a type's skeleton shows
    body_start: int  # the `body` field; a static initializer's block (its last named child)
    head: str  # what a type's skeleton shows: the source up to the `body` field (all if none), squashed
    owner: str  # nested name of the declaring type; `Enum.CONSTANT` inside a constant body
    name: str
    modifiers: Modifiers
    type_params: str | None  # a callable's `type_parameters` field squashed (`<T>`), None without one
    returns: str | None  # a method's return type squashed, None for constructors and non-callables
    params: tuple[Param, ...]  # a compact constructor's are its record's components
    doc_start: int  # the javadoc comment right before it
    doc_end: int
    doc_row: int
    members: tuple[MemberDecl, ...]


class TypeDecl(NamedTuple):
    """A named class, interface, enum, record or annotation type declaration, local ones included."""

    kind: str  # the node type
    name: str
    nested_name: str  # Outer.Inner (enum constants with a body count as a level), without the package
    outer: int  # index of the innermost enclosing type declaration in `Outline.types`, -1 if none or unnamed
    start: int
    end: int
    start_row: int
    end_row: int
    head_start: int  # where the declaration line starts, after the modifiers
    body_start: int
    has_error: bool
    head_error: bool  # an error in a child other than the body
    body_error: bool
    doc_start: int
    doc_end: int
    doc_row: int
    modifiers: Modifiers
    extends: tuple[str, ...]  # simple names
    implements: tuple[str, ...]
    fields: tuple[Field, ...]  # record components first
    members: tuple[MemberDecl, ...]


class Receiver:
    """What a call's receiver is (`Call.receiver`), and the root of a chain (`Call.root`)."""

    NONE = 0  # an unqualified call
    IDENTIFIER = 1
    DOTTED = 2  # a.b.C: identifiers joined by field accesses
    CHAIN = 3  # anything else: method calls, field accesses, literals... down to a root
    ORPHAN = 4  # a chain whose innermost link has no object (a parse error)
    THIS = 5
    SUPER = 6
    FIELD = 7  # `this.x`, or a field access left inside parentheses
    TYPED = 8  # `new T()`, `(T) x`, a literal or a type: `root_text` is its simple type
    OTHER = 9
    PROPERTY = 10  # a Kotlin property read or written on an identifier: a call only where its type is known


class Call(NamedTuple):
    """A method invocation or method reference: the name's row, the name, and its receiver taken apart."""

    row: int
    name: str
    receiver: int  # Receiver.NONE, IDENTIFIER, DOTTED or CHAIN
    text: str  # the identifier or dotted name as written
    root: int  # the chain's root kind; IDENTIFIER for an identifier or dotted receiver
    root_text: str  # identifier, field name, simple type, or the expression squashed
    alt: str  # FIELD: the field access squashed, used when the field is not known
    links: tuple[str, ...]  # the links after the root, innermost first: `("findById()", "map")`


class LocalDecl(NamedTuple):
    """A local variable, parameter, catch parameter, resource or pattern variable with its simple type."""

    row: int
    name: str
    type: str  # "" for `var` unless initialized with `new T(...)`


class Import(NamedTuple):
    """One import declaration."""

    name: str  # dotted, without `.*`
    static: bool
    wildcard: bool


class Outline(NamedTuple):
    """Everything the chunker reads from one file's tree."""

    package: str
    imports: tuple[Import, ...]
    types: list[TypeDecl]  # in document order, outer before inner
    calls: list[Call]  # ordered by row
    decls: list[LocalDecl]  # ordered by row
    has_error: bool  # the tree holds an error or a missing node somewhere
