"""The tree-sitter Java grammar, one parser per thread, and small node helpers.

tree-sitter's `Parser` is not safe to share between threads, so each thread gets its own
(the worker parses in an executor).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import tree_sitter_java
from tree_sitter import Language, Node, Parser, Query, Tree

JAVA = Language(tree_sitter_java.language())
_local = threading.local()


def parse(data: bytes) -> Tree:
    """Parse UTF-8 Java source with this thread's parser."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = Parser(JAVA)
        _local.parser = parser
    return parser.parse(data)


def query(source: str) -> Query:
    """Compile a tree-sitter query against the Java grammar."""
    return Query(JAVA, source)


def text(node: Node | None) -> str:
    """The source text of a node ("" for None). Sources are valid UTF-8 by the time they are parsed."""
    return (node.text or b"").decode() if node is not None else ""


def slice_text(data: bytes, node: Node | None) -> str:
    """`text(node)` for a node of the tree parsed from `data`, sliced from the file's bytes ("" for None).

    `Node.text` builds a memoryview, a slice and two bytes objects on every read; slicing the bytes
    by the node's offsets costs a third of that (callgrind), and the hot paths read ~500,000 texts on java.base.
    """
    return data[node.start_byte : node.end_byte].decode() if node is not None else ""


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


def node_path(root: Node, start: int, end: int, kind: str) -> Path:
    """The path of `node_at(root, start, end, kind)`."""
    node, path = root, []
    while not (node.start_byte == start and node.end_byte == end and node.type == kind):
        index, node = next(
            ((i, c) for i, c in enumerate(node.children) if c.start_byte <= start and end <= c.end_byte), (-1, node)
        )
        if index < 0:
            raise LookupError(f"no {kind} node at bytes {start}-{end}")
        path.append(index)
    return tuple(path)


def named_spans(root: Node, path: Path) -> tuple[Span, ...]:
    """The named children of the node at `path`."""
    node = root
    for index in path:
        node = node.children[index]
    return tuple(
        Span(
            c.type,
            node.field_name_for_child(i),
            c.start_byte,
            c.end_byte,
            c.start_point.row,
            c.end_point.row,
            (*path, i),
        )
        for i, c in enumerate(node.children)
        if c.is_named
    )
