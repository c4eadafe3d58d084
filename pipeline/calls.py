"""Method calls inside a body, with the receiver resolved to its declared type where the file says it.

The file's one scan (pipeline.scan) collects every invocation, method reference and variable
declaration; each method then takes the slice on its rows. A receiver is resolved from
locals and parameters declared in that method, fields of the enclosing types, `this`, `super`, or a
capitalized name taken as a class (static call). Anything else keeps its text: `a.b().c` stays raw.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter

from tree_sitter import Node

from pipeline.scan import Scan
from pipeline.syntax import squash, text
from pipeline.types import Imports, simple_type

_MAX_RAW = 80

CallList = tuple[tuple[str, ...], tuple[str, ...]]


# (row, receiver node or None for an unqualified call, method name): tuples, as there are ~50 per file.
_Call = tuple[int, Node | None, str]
# (row, variable name, declared simple type)
_Decl = tuple[int, str, str]
_row = itemgetter(0)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallScope:
    """What a method body can see: its type, the type's superclass and fields, and the file's imports."""

    type_name: str
    superclass: str | None
    fields: Mapping[str, str]
    imports: Imports


class FileCalls:
    """Calls and declarations of one file, indexed by position."""

    def __init__(self, found: Scan) -> None:
        self._calls = _collect_calls(found)
        self._call_starts = [c[0] for c in self._calls]
        self._decls = _collect_decls(found)
        self._decl_starts = [d[0] for d in self._decls]

    def calls_in(self, rows: tuple[int, int], body_rows: tuple[int, int], scope: CallScope) -> CallList:
        """Calls on rows `rows` (inclusive) as `Receiver.method`, and their fully qualified forms.

        Local variables are looked up among the declarations on `body_rows`, the whole method,
        so a part of a split method still knows the locals declared in the parts before it.
        """
        lo, hi = bisect_left(self._call_starts, rows[0]), bisect_left(self._call_starts, rows[1] + 1)
        if lo == hi:
            return (), ()
        d_lo = bisect_left(self._decl_starts, body_rows[0])
        d_hi = bisect_left(self._decl_starts, body_rows[1] + 1)
        local_types = {name: type_name for _, name, type_name in self._decls[d_lo:d_hi]}
        calls: dict[str, None] = {}
        fq: dict[str, None] = {}
        resolve = scope.imports.resolve
        for _, node, name in self._calls[lo:hi]:
            receiver, resolved = _receiver(node, name, local_types, scope)
            calls[f"{receiver}.{name}"] = None
            if resolved and (target := resolve(receiver)):
                fq[f"{target}.{name}"] = None
        return tuple(calls), tuple(fq)


def _collect_calls(found: Scan) -> list[_Call]:
    # The name's row, not the call's: in a chain split over lines, `.save(x)` sits on its own line.
    calls: list[_Call] = [(name.start_point.row, receiver, text(name)) for receiver, name in found.calls]
    for ref in found.references:
        children = ref.children
        if len(children) >= 3:
            calls.append((children[-1].start_point.row, children[0], text(children[-1])))
    calls.sort(key=_row)
    return calls


def _collect_decls(found: Scan) -> list[_Decl]:
    decls: list[_Decl] = []
    for type_node, name, value in found.variables:
        type_name = simple_type(type_node)
        if type_name == "var":
            type_name = _inferred(value) if value is not None else ""
        if type_name:
            decls.append((name.start_point.row, text(name), type_name))
    decls.sort(key=_row)
    return decls


def _inferred(value: Node) -> str:
    # `var x = new Foo<>()` is the only initializer whose type the file states outright.
    if value.type == "object_creation_expression":
        return simple_type(value.child_by_field_name("type"))
    return ""


def _receiver(node: Node | None, name: str, local_types: Mapping[str, str], scope: CallScope) -> tuple[str, bool]:
    """The receiver's declared type (and True), or a compact form of it as written (and False).

    The compact form of a chain keeps its shape and drops arguments, with the chain's root resolved
    when the file declares it: `repo.findById(id).map` → `OwnerRepository.findById().map`.
    """
    if node is None:
        static = scope.imports.static_members.get(name)
        if static:
            return static.rsplit(".", 2)[-2], True
        return scope.type_name, True
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
    root, resolved = _root(node, local_types, scope)
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


def _root(node: Node, local_types: Mapping[str, str], scope: CallScope) -> tuple[str, bool]:
    """The start of a receiver expression: a typed variable, `this`, a class name, a literal, or text."""
    kind = node.type
    if kind == "identifier":
        variable = text(node)
        known = local_types.get(variable) or scope.fields.get(variable)
        if known:
            return known, True
        return variable, variable[:1].isupper()  # a capitalized name is a class: a static call
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
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _root(node.named_children[0], local_types, scope)
    return _compact(squash(text(node)), []), False
