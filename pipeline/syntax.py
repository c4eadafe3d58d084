"""The tree-sitter Java grammar, one parser per thread, and small node helpers.

tree-sitter's `Parser` is not safe to share between threads, so each thread gets its own
(the worker parses in an executor).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import tree_sitter_java
from tree_sitter import Language, Node, Parser, Tree

JAVA = Language(tree_sitter_java.language())
_local = threading.local()


def parse(data: bytes) -> Tree:
    """Parse UTF-8 Java source with this thread's parser."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = Parser(JAVA)
        _local.parser = parser
    return parser.parse(data)


def text(node: Node | None) -> str:
    """The source text of a node ("" for None). Sources are valid UTF-8 by the time they are parsed."""
    return (node.text or b"").decode() if node is not None else ""


def squash(value: str) -> str:
    """Collapse runs of white space to one space, as a signature or type is shown to a reader."""
    if "\n" not in value and "  " not in value and "\t" not in value:
        return value.strip()  # the common case, and ten times cheaper than split/join
    return " ".join(value.split())


def node_at(root: Node, start: int, end: int, kind: str) -> Node:
    """The node of type `kind` spanning bytes `start` to `end`, found from the root (outline records keep offsets).

    Only rare paths need a node again (splitting a long method, listing syntax errors), so a
    descent from the root, one level at a time, is cheap enough.
    """
    node = root
    while not (node.start_byte == start and node.end_byte == end and node.type == kind):
        inner = next((c for c in node.children if c.start_byte <= start and end <= c.end_byte), None)
        if inner is None:
            raise LookupError(f"no {kind} node at bytes {start}-{end}")
        node = inner
    return node


Path = tuple[int, ...]
"""A node as the indices of the children that lead to it from the root."""


class Span(NamedTuple):
    """A named node as the splitter reads it: where it is, and how to reach it again (`path`)."""

    kind: str
    field: str | None  # the field of its parent it is in
    start: int
    end: int
    start_row: int
    end_row: int
    path: Path
