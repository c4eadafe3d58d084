"""The C reader of Java outlines (pipeline/csrc/, built by scripts/build_native); see pipeline/outline.py."""

from collections.abc import Callable
from types import ModuleType

from tree_sitter import Tree

from pipeline.outline import Outline
from pipeline.render import ChunkRenderer

TREE_SITTER_VERSION: str
render_chunk: ChunkRenderer
"""A chunk's embedding text, content hash and id, as `pipeline.render.render_chunk` (after `bind`)."""

def bind(
    outline: ModuleType,
    squash: Callable[[str], str],
    scoped_name: Callable[[str], str],
    sha256: Callable[[bytes], object],
    sha1: Callable[[bytes], object],
    summarize: Callable[[str], str | None],
    /,
) -> None:
    """Give the reader its record classes, the string rules it defers to (non-ASCII text) and the hashes."""

def read_outline(tree: Tree, data: bytes, /) -> Outline:
    """The outline of a tree that py-tree-sitter parsed from `data`."""

def summarize(raw: str, /) -> str | None:
    """`pipeline.javadoc.summarize`: in C for ASCII comments, else the Python function (after `bind`)."""

def probe(tree: Tree, /) -> tuple[str, int, int, int, int]:
    """The root's type, start and end byte, child count and named child count, as the C runtime reads them."""
