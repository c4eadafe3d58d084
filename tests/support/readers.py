"""Stand-ins for the C outline reader: one that agrees with the Python reader, one that drifted from it."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Tree

from pipeline import tree_outline
from pipeline.outline import Outline
from pipeline.syntax import Path, named_spans, node_path, parse


class FakeNative:
    """A stand-in for `pipeline._native` (see `pipeline.native.NativeModule`)."""

    def __init__(self, version: str, read: Callable[[Tree, bytes], Outline]) -> None:
        self.TREE_SITTER_VERSION = version
        self._read = read

    def bind(self, *bound: object) -> None:
        pass

    def read_outline(self, data: bytes, /) -> tuple[Outline, object]:
        tree = parse(data)
        return self._read(tree, data), tree

    def locate(self, tree: object, start: int, end: int, kind: str, /) -> Path:
        assert isinstance(tree, Tree)
        return node_path(tree.root_node, start, end, kind)

    def children(self, tree: object, path: Path, /) -> tuple[tuple[str, str | None, int, int, int, int, int], ...]:
        assert isinstance(tree, Tree)
        return tuple((*s[:6], s.path[-1]) for s in named_spans(tree.root_node, path))

    def probe(self, data: bytes, /) -> tuple[str, int, int, int, int]:
        root = parse(data).root_node
        return (root.type, root.start_byte, root.end_byte, root.child_count, root.named_child_count)


def drifted(tree: Tree, data: bytes) -> Outline:
    """A reader that reads one fact of the probe differently: the drift the check exists for."""
    found = tree_outline.read_outline(tree, data)
    first = found.types[0]
    return found._replace(types=[first._replace(members=first.members[1:]), *found.types[1:]])
