"""The tree-sitter Kotlin grammar (PyPI `tree-sitter-kotlin`), one parser per thread, and node helpers."""

from __future__ import annotations

import threading

import tree_sitter_kotlin
from tree_sitter import Language, Node, Parser, Tree

KOTLIN = Language(tree_sitter_kotlin.language())
_local = threading.local()

SUFFIX = ".kt"
"""The file name ending of Kotlin sources (`.kts` build scripts are not sources of the application)."""


def parse(data: bytes) -> Tree:
    """Parse UTF-8 Kotlin source with this thread's parser, ended by a newline.

    The 1.1.0 grammar's scanner can loop forever at the end of a source that stops inside an unclosed
    construct without a newline (an unterminated string in an annotation, seen by fuzzing Exposed's
    sources); a final newline ends that loop, and adds no row and moves no byte offset of the source.
    """
    if not data.endswith(b"\n"):
        data += b"\n"
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = Parser(KOTLIN)
        _local.parser = parser
    return parser.parse(data)


def child(node: Node, kind: str) -> Node | None:
    """The first named child of type `kind`."""
    return next((c for c in node.named_children if c.type == kind), None)


def children(node: Node, kind: str) -> list[Node]:
    """The named children of type `kind`."""
    return [c for c in node.named_children if c.type == kind]


def has_token(node: Node, token: str) -> bool:
    """True when an anonymous child is the keyword or punctuation `token` (`interface`, `object`)."""
    return any(not c.is_named and c.type == token for c in node.children)
