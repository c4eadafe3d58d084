"""Annotations and modifiers of a declaration, read from its `modifiers` node (the Python reader).

An annotation keeps its text as written (`@Transactional(readOnly = true)`), its simple name
for filtering (`Transactional`, also for `@org.springframework...Transactional`) and its
arguments by element name, with the single unnamed argument under `value` (JLS 9.7.3).
"""

from __future__ import annotations

from types import MappingProxyType

from tree_sitter import Node

from pipeline.outline import EMPTY_ARGS, NO_MODIFIERS, Annotation, AnnotationValue, Modifiers
from pipeline.syntax import slice_text, squash, text

_COMMENTS = ("line_comment", "block_comment")


def read_modifiers(decl: Node, data: bytes) -> Modifiers:
    """Modifiers of a declaration node (class, method, field, parameter...) of the tree parsed from `data`."""
    mods = decl.named_child(0)  # the grammar puts `modifiers` first when present
    if mods is None or mods.type != "modifiers":
        return NO_MODIFIERS
    keywords: list[str] = []
    annotations: list[Annotation] = []
    for child in mods.children:
        kind = child.type
        if kind == "annotation" or kind == "marker_annotation":
            annotations.append(read_annotation(child, data))
        elif not child.is_named:
            # A keyword token's type is its text, and reading it copies no source; a token that
            # error recovery inserted (missing) has no text.
            keywords.append("" if child.is_missing else kind)
        elif kind != "line_comment" and kind != "block_comment":
            keywords.append(slice_text(data, child))
    return Modifiers(keywords=tuple(keywords), annotations=tuple(annotations))


def read_annotation(node: Node, data: bytes) -> Annotation:
    """One `annotation` or `marker_annotation` node of the tree parsed from `data`."""
    name = slice_text(data, node.child_by_field_name("name")).rsplit(".", 1)[-1]
    args_node = node.child_by_field_name("arguments")
    if args_node is None:
        return Annotation(text=squash(slice_text(data, node)), name=name, args=EMPTY_ARGS)
    args: dict[str, tuple[AnnotationValue, ...]] = {}
    for arg in args_node.named_children:
        if arg.type == "element_value_pair":
            key = text(arg.child_by_field_name("key"))
            args[key] = _flatten(arg.child_by_field_name("value"))
        elif arg.type not in _COMMENTS:
            args["value"] = _flatten(arg)
    return Annotation(text=squash(slice_text(data, node)), name=name, args=MappingProxyType(args))


def _flatten(value: Node | None) -> tuple[AnnotationValue, ...]:
    if value is None:
        return ()
    if value.type == "element_value_array_initializer":
        return tuple(_value(c) for c in value.named_children if c.type not in _COMMENTS)
    return (_value(value),)


def _value(node: Node) -> AnnotationValue:
    return AnnotationValue(text=text(node), string=string_value(node))


def string_value(node: Node) -> str:
    """A constant string argument: a literal, a concatenation of literals, or the expression as written.

    Walked with an explicit stack: a 5,000-term concatenation nests 5,000 deep.
    """
    out: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind == "string_literal":
            out.append(
                "".join(text(c) for c in current.named_children if c.type in ("string_fragment", "escape_sequence"))
            )
            continue
        if kind == "binary_expression":
            left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
            if left is not None and right is not None:
                stack.extend((right, left))  # left is popped first
                continue
        if kind == "parenthesized_expression" and current.named_child_count == 1:
            stack.append(current.named_children[0])
            continue
        # A constant such as ApiPaths.OWNERS cannot be resolved without compiling; keep it readable.
        out.append("${" + squash(text(current)) + "}")
    return "".join(out)
