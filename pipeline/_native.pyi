"""The C reader of Java outlines (pipeline/csrc/, built by scripts/build_native); see pipeline/outline.py."""

from collections.abc import Callable
from types import ModuleType

from tree_sitter import Tree

from pipeline.outline import Outline

TREE_SITTER_VERSION: str

def bind(outline: ModuleType, squash: Callable[[str], str], scoped_name: Callable[[str], str], /) -> None:
    """Give the reader the record classes of `pipeline.outline` and the Python string rules it defers to."""

def read_outline(tree: Tree, data: bytes, /) -> Outline:
    """The outline of a tree that py-tree-sitter parsed from `data`."""

def probe(tree: Tree, /) -> tuple[str, int, int, int, int]:
    """The root's type, start and end byte, child count and named child count, as the C runtime reads them."""
