"""Kotlin modifiers and annotations as the Java side's records (`pipeline.outline.Modifiers`).

The Spring rules (`pipeline.spring`: stereotypes, routes, injection) read those records, so they are
written once for both languages: `@RequestMapping(value = ["/a", "/b"])` gives the values Java's
`@RequestMapping({"/a", "/b"})` gives.
"""

from __future__ import annotations

from tree_sitter import Node

from pipeline.kotlin.grammar import child
from pipeline.outline import EMPTY_ARGS, Annotation, AnnotationValue, Modifiers
from pipeline.syntax import squash, text

_VALUE = "value"  # the element a lone unnamed argument sets, as in Java (JLS 9.7.3)


def modifiers_of(node: Node | None) -> Modifiers:
    """The keywords and annotations of a `modifiers` (or `parameter_modifiers`) node; none for None."""
    if node is None:
        return Modifiers()
    keywords: list[str] = []
    annotations: list[Annotation] = []
    for each in node.named_children:
        if each.type == "annotation":
            annotations.append(annotation_of(each))
        else:
            keywords.append(text(each))
    return Modifiers(tuple(keywords), tuple(annotations))


def annotation_of(node: Node) -> Annotation:
    """`@GetMapping(value = ["/a"])` → `Annotation("@GetMapping(...)", "GetMapping", {"value": (...)})`."""
    call = child(node, "constructor_invocation")
    kind = child(call if call is not None else node, "user_type")
    name = text(kind).split("<", 1)[0].rsplit(".", 1)[-1].strip()
    arguments = child(call, "value_arguments") if call is not None else None
    if arguments is None:
        return Annotation(squash(text(node)), name)
    args: dict[str, tuple[AnnotationValue, ...]] = {}
    for argument in arguments.named_children:
        if argument.type != "value_argument":
            continue
        named = list(argument.named_children)
        if len(named) >= 2 and named[0].type == "identifier" and any(t.type == "=" for t in argument.children):
            key, expression = text(named[0]), named[-1]
        elif named:
            key, expression = _VALUE, named[-1]
        else:
            continue
        args[key] = (*args.get(key, ()), *_values(expression))
    return Annotation(squash(text(node)), name, args or EMPTY_ARGS)


def _values(node: Node) -> tuple[AnnotationValue, ...]:
    """An argument's values, arrays (`[...]`, `arrayOf(...)`) flattened."""
    if node.type == "collection_literal":
        return tuple(v for each in node.named_children for v in _values(each))
    if node.type == "call_expression" and text(node).startswith("arrayOf("):
        arguments = child(node, "value_arguments")
        found = (
            [] if arguments is None else [a.named_children[-1] for a in arguments.named_children if a.named_children]
        )
        return tuple(v for each in found for v in _values(each))
    return (AnnotationValue(squash(text(node)), constant_string(node)),)


def constant_string(node: Node) -> str:
    """A string literal's value, templates as `${expression}`; any other expression as `${expression}`."""
    if node.type != "string_literal":
        return "${" + squash(text(node)) + "}"
    out: list[str] = []
    for part in node.named_children:
        if part.type == "string_content":
            out.append(text(part))
        elif part.type == "interpolation":
            inner = text(part).removeprefix("$").removeprefix("{").removesuffix("}")
            out.append("${" + inner + "}")
        else:
            out.append(text(part))
    return "".join(out)
