"""Method calls inside a body, with the receiver resolved to its declared type where the file says it.

The file's one scan (pipeline.scan) collects every invocation, method reference and variable
declaration; each method then takes the slice on its rows. A receiver is resolved from
locals and parameters declared in that method, fields of the enclosing types, `this`, `super`, or a
capitalized name taken as a class (static call). Anything else keeps its text: `a.b().c` stays raw.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import field
from operator import itemgetter

from tree_sitter import Node

from pipeline._values import value
from pipeline.scan import Scan
from pipeline.syntax import slice_text, squash, text
from pipeline.types import Imports, simple_type

_MAX_RAW = 80

CallList = tuple[tuple[str, ...], tuple[str, ...]]


# (row, receiver node or None for an unqualified call, method name): tuples, as there are ~50 per file.
_Call = tuple[int, Node | None, str]
# (row, variable name, declared type node): typed lazily, most locals are never a receiver
_Decl = tuple[int, str, Node]
_row = itemgetter(0)
LocalType = Callable[[str], "str | None"]


@value
class CallScope:
    """What a method body can see: its type, the type's superclass and fields, and the file's imports."""

    type_name: str
    superclass: str | None
    fields: Mapping[str, str]
    imports: Imports
    known_fq: Mapping[str, str] = field(default_factory=dict)  # e.g. Lombok's generated `log` type


class FileCalls:
    """Calls and declarations of one file, indexed by position."""

    def __init__(self, found: Scan, data: bytes) -> None:
        self._data = data  # the parsed bytes: node texts are sliced from it
        self._calls = _collect_calls(found, data)
        self._call_starts = [c[0] for c in self._calls]
        self._decls = _collect_decls(found, data)
        self._decl_starts = [d[0] for d in self._decls]
        self._decl_types: dict[int, str] = {}
        self._resolved: dict[str, str | None] = {}

    def calls_in(self, rows: tuple[int, int], body_rows: tuple[int, int], scope: CallScope) -> CallList:
        """Calls on rows `rows` (inclusive) as `Receiver.method`, and their fully qualified forms.

        Local variables are looked up among the declarations on `body_rows`, the whole method,
        so a part of a split method still knows the locals declared in the parts before it.
        """
        starts = self._call_starts
        lo, hi = bisect_left(starts, rows[0]), bisect_left(starts, rows[1] + 1)
        if lo == hi:
            return (), ()
        d_lo = bisect_left(self._decl_starts, body_rows[0])
        d_hi = bisect_left(self._decl_starts, body_rows[1] + 1)
        local_type = _Locals(self._decls, d_lo, d_hi, self._type_of).type_of
        calls: dict[str, None] = {}
        fq: dict[str, None] = {}
        resolve, data = self._resolve, self._data
        for _, node, name in self._calls[lo:hi]:
            explicit = _qualified_receiver(data, node, name, local_type, scope)
            if explicit is not None:
                receiver, target = explicit
                calls[f"{receiver}.{name}"] = None
                if target:
                    fq[f"{target}.{name}"] = None
                continue
            receiver, resolved = _receiver(data, node, name, local_type, scope)
            calls[f"{receiver}.{name}"] = None
            if resolved and (target := scope.known_fq.get(receiver) or resolve(receiver, scope.imports)):
                fq[f"{target}.{name}"] = None
        return tuple(calls), tuple(fq)

    def _resolve(self, name: str, imports: Imports) -> str | None:
        # Every method of a file resolves against the file's one `Imports`, and receivers repeat
        # (a field or a type is called dozens of times), so answers are kept for the file.
        try:
            return self._resolved[name]
        except KeyError:
            target = self._resolved[name] = imports.resolve(name)
            return target

    def _type_of(self, index: int) -> str:
        cached = self._decl_types.get(index)
        if cached is None:
            cached = _declared_type(self._decls[index][2])
            self._decl_types[index] = cached
        return cached


class _Locals:
    """The local declarations of one method, indexed by name on the first lookup.

    A method whose calls are all unqualified or on `this` or `super` never looks a local up, so
    the name index is only built when a receiver is a plain identifier.
    """

    __slots__ = ("_decls", "_hi", "_index", "_lo", "_typed")

    def __init__(self, decls: list[_Decl], lo: int, hi: int, typed: Callable[[int], str]) -> None:
        self._decls, self._lo, self._hi, self._typed = decls, lo, hi, typed
        self._index: dict[str, int] | None = None

    def type_of(self, variable: str) -> str | None:
        """Declared simple type of a local variable or parameter of the method, if it has one."""
        index = self._index
        if index is None:
            decls = self._decls
            index = self._index = {decls[i][1]: i for i in range(self._lo, self._hi)}  # a later one shadows
        found = index.get(variable)
        return None if found is None else self._typed(found)


def _collect_calls(found: Scan, data: bytes) -> list[_Call]:
    # The name's row, not the call's: in a chain split over lines, `.save(x)` sits on its own line.
    calls: list[_Call] = [(name.start_point.row, receiver, slice_text(data, name)) for receiver, name in found.calls]
    for ref in found.references:
        children = ref.children
        if len(children) >= 3:
            calls.append((children[-1].start_point.row, children[0], slice_text(data, children[-1])))
    calls.sort(key=_row)
    return calls


def _collect_decls(found: Scan, data: bytes) -> list[_Decl]:
    decls: list[_Decl] = [
        (name.start_point.row, slice_text(data, name), type_node) for type_node, name in found.variables
    ]
    decls.sort(key=_row)
    return decls


def _declared_type(type_node: Node) -> str:
    type_name = simple_type(type_node)
    if type_name != "var":
        return type_name
    # `var x = new Foo<>()` is the only initializer whose type the file states outright.
    parent = type_node.parent
    if parent is not None and parent.type == "resource":  # try (var in = new FileInputStream(f))
        value = parent.child_by_field_name("value")
    else:
        declarator = type_node.next_named_sibling
        value = declarator.child_by_field_name("value") if declarator is not None else None
    if value is not None and value.type == "object_creation_expression":
        return simple_type(value.child_by_field_name("type"))
    return ""


def _qualified_receiver(
    data: bytes, node: Node | None, name: str, local_type: LocalType, scope: CallScope
) -> tuple[str, str | None] | None:
    """Receivers that name a type with dots: a static import, `java.util.Objects`, `Map.Entry`.

    Returns (receiver as written in `calls`, its fully qualified type or None), or None when the
    receiver is something else.
    """
    if node is None:
        static = scope.imports.static_members.get(name)
        if not static:
            return None
        owner = static.rsplit(".", 1)[0]  # `import static java.util.Objects.requireNonNull`
        return owner.rsplit(".", 1)[-1], owner
    dotted = _dotted(data, node)
    if dotted is None or "." not in dotted:
        return None
    parts = dotted.split(".")
    if local_type(parts[0]) or parts[0] in scope.fields:
        return None  # `repo.items.size()`: a field of a variable
    if parts[0][:1].islower():
        first_type = next((i for i, p in enumerate(parts) if p[:1].isupper()), None)
        if first_type is None or first_type == 0:
            return None
        return ".".join(parts[first_type:]), dotted  # `java.util.Objects.requireNonNull(x)`
    if all(p[:1].isupper() for p in parts):
        return dotted, scope.imports.resolve(dotted)  # a nested type: `Map.Entry.comparingByKey()`
    return None


def _dotted(data: bytes, node: Node) -> str | None:
    """`a.b.C` for a chain of plain identifiers (field accesses), else None."""
    names: list[str] = []
    while node.type == "field_access":
        field_node = node.child_by_field_name("field")
        inner = node.child_by_field_name("object")
        if field_node is None or inner is None:
            return None
        names.append(slice_text(data, field_node))
        node = inner
    if node.type != "identifier":
        return None
    names.append(slice_text(data, node))
    return ".".join(reversed(names))


def _receiver(data: bytes, node: Node | None, name: str, local_type: LocalType, scope: CallScope) -> tuple[str, bool]:
    """The receiver's declared type (and True), or a compact form of it as written (and False).

    The compact form of a chain keeps its shape and drops arguments, with the chain's root resolved
    when the file declares it: `repo.findById(id).map` → `OwnerRepository.findById().map`.
    """
    if node is None:
        return scope.type_name, True  # unqualified (static imports were handled before)
    if node.type == "identifier":  # `repo.save(x)`, two receivers in three: skip the chain walk
        return _variable(slice_text(data, node), local_type, scope)
    segments: list[str] = []
    while node.type in _CHAIN_LINKS:
        if node.type == "method_invocation":
            segments.append(text(node.child_by_field_name("name")) + "()")
        elif _is_this_field(node):
            break
        else:
            segments.append(text(node.child_by_field_name("field")))
        inner = node.child_by_field_name("object")
        if inner is None:
            return _compact(scope.type_name, segments), False
        node = inner
    root, resolved = _root(data, node, local_type, scope)
    if not segments:
        return root, resolved
    return _compact(root, segments), False


_CHAIN_LINKS = frozenset({"method_invocation", "field_access"})
_LITERAL_TYPES = {"string_literal": "String", "text_block": "String", "character_literal": "char"}


def _is_this_field(node: Node) -> bool:
    obj = node.child_by_field_name("object")
    return node.type == "field_access" and obj is not None and obj.type == "this"


def _compact(root: str, segments: list[str]) -> str:
    # A fluent run of one method (`append().append().append()`) reads as one link.
    links = [seg for i, seg in enumerate(segments) if i + 1 == len(segments) or segments[i + 1] != seg]
    rendered = ".".join([root, *reversed(links)])
    return rendered if len(rendered) <= _MAX_RAW else rendered[: _MAX_RAW - 1] + "…"


def _variable(variable: str, local_type: LocalType, scope: CallScope) -> tuple[str, bool]:
    """A receiver named by an identifier: a typed local or field, else a class when capitalized."""
    known = local_type(variable) or scope.fields.get(variable)
    if known:
        return known, True
    return variable, variable[:1].isupper()  # a capitalized name is a class: a static call


def _root(data: bytes, node: Node, local_type: LocalType, scope: CallScope) -> tuple[str, bool]:
    """The start of a receiver expression: a typed variable, `this`, a class name, a literal, or text."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]  # a loop, not recursion: `((((x))))` may nest a thousand deep
    kind = node.type
    if kind == "identifier":
        return _variable(slice_text(data, node), local_type, scope)
    if kind == "this":
        return scope.type_name, True
    if kind == "super":
        return (scope.superclass, True) if scope.superclass else ("super", False)
    if kind == "field_access":  # this.field
        field_type = scope.fields.get(text(node.child_by_field_name("field")))
        return (field_type, True) if field_type else (squash(text(node)), False)
    if kind in ("object_creation_expression", "cast_expression"):
        return simple_type(node.child_by_field_name("type")), True
    if kind in _LITERAL_TYPES:
        return _LITERAL_TYPES[kind], True
    if kind in ("type_identifier", "scoped_type_identifier", "generic_type", "array_type"):
        return simple_type(node), True
    return _compact(squash(text(node)), []), False
