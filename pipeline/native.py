"""The reader of outlines: `pipeline._native`, a C extension, which the pipeline requires.

`pipeline._native` (pipeline/csrc/) parses a file with its own copy of the tree-sitter runtime and reads
the tree into an outline (`pipeline.outline`): facts only (node kinds, spans, fields, texts). Every rule
that turns those facts into chunks (signatures, names, javadoc summaries, the embedding text) is Python.

The extension is compiled by `scripts/build_native` (a C compiler and the Python headers) with the
sources of the exact tree-sitter release that is installed (pinned in pyproject.toml), on tree-sitter's
public C API only (`tree_sitter_java.language()`'s capsule): py-tree-sitter offers no public route to its
`Tree`'s C tree. py-tree-sitter parses a file again only when a node is asked for (`Parsed.tree`), and the
two copies of the runtime must build the same trees, so a module built for another tree-sitter release
is refused. Importing the pipeline without a usable extension raises `ImportError` naming
`scripts/build_native`: there is no other reader (docs/decisions.md, "One Java reader: the C reader").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache, partial
from importlib import metadata
from types import ModuleType
from typing import NamedTuple, Protocol, cast

from tree_sitter import Tree

from pipeline import outline
from pipeline.outline import Outline
from pipeline.syntax import Path, Span, parse, squash
from pipeline.types import scoped_name

BUILD = "run scripts/build_native (it needs a C compiler and the Python headers)"
"""How to get the extension, for every error that says it is missing or stale."""


class Parsed(NamedTuple):
    """A file's outline, and its tree for what reads nodes again: long methods, HTTP client calls, syntax gaps."""

    outline: Outline
    tree: Callable[[], Tree]  # py-tree-sitter's tree, parsed when first asked
    locate: Callable[[int, int, str], Path]  # the child-index path of the node of a kind at a byte span
    children: Callable[[Path], tuple[Span, ...]]  # the named children of the node at a path


OutlineReader = Callable[[bytes], Parsed]


class NativeModule(Protocol):
    """What `pipeline._native` offers: its one declaration (the module has no stub of its own)."""

    TREE_SITTER_VERSION: str

    def bind(self, outline: ModuleType, squash: Callable[[str], str], scoped_name: Callable[[str], str], /) -> None:
        """Give the reader its record classes and the text functions it defers to for non-ASCII text."""

    def read_outline(self, data: bytes, /) -> tuple[Outline, object]:
        """The outline of the Java source `data`, parsed by the extension's own copy of the runtime, and its tree."""

    def locate(self, tree: object, start: int, end: int, kind: str, /) -> Path:
        """The child-index path of the node of type `kind` at bytes `start`-`end` in a tree of `read_outline`."""

    def children(self, tree: object, path: Path, /) -> tuple[tuple[str, str | None, int, int, int, int, int], ...]:
        """The named children of the node at `path`: type, field, bytes, rows and index among all children."""


def stale(native: NativeModule, installed: str) -> str | None:
    """Why a built extension must not be used (it was built for another tree-sitter), or None."""
    if installed != native.TREE_SITTER_VERSION:
        return f"pipeline._native was built for tree-sitter {native.TREE_SITTER_VERSION} but {installed} is installed"
    return None


def native_reader(native: NativeModule) -> OutlineReader:
    """A reader over the extension, whose own tree answers `locate` and `children`.

    py-tree-sitter parses the file only if its tree is asked for.
    """
    read, locate, children = native.read_outline, native.locate, native.children

    def spans(tree: object, path: Path) -> tuple[Span, ...]:
        return tuple(Span(*c[:6], (*path, c[6])) for c in children(tree, path))

    def read_native(data: bytes) -> Parsed:
        found, tree = read(data)
        return Parsed(found, cache(partial(parse, data)), partial(locate, tree), partial(spans, tree))

    return read_native


def load() -> NativeModule:
    """The built extension, bound to the outline's records.

    Raises:
        ImportError: it is not built, or was built for another tree-sitter release; the message says how to build it.
    """
    try:
        module = cast(NativeModule, importlib.import_module("pipeline._native"))
    except ImportError as exc:
        raise ImportError(f"pipeline._native is not built ({exc}): {BUILD}", name="pipeline._native") from exc
    problem = stale(module, metadata.version("tree-sitter"))
    if problem is not None:
        raise ImportError(f"{problem}: {BUILD}", name="pipeline._native")
    module.bind(outline, squash, scoped_name)
    return module


NATIVE = load()
"""The C extension, checked and bound."""

read_outline: OutlineReader = native_reader(NATIVE)
"""The outline of a tree parsed from the given bytes (see `pipeline.outline`)."""
