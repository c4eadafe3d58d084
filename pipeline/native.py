"""The C reader of outlines when it is built and agrees with the Python reader, else the Python reader.

`pipeline._native` (pipeline/csrc/) reads a tree into an outline (`pipeline.outline`) as
`pipeline.tree_outline` does: facts only (node kinds, spans, fields, texts). Every rule that turns
those facts into chunks (signatures, names, javadoc summaries, the embedding text) is Python, applied
to the outline whichever reader built it.

The extension is compiled by `scripts/build_native` with the sources of the exact tree-sitter release
that is installed (pinned in pyproject.toml) and parses the bytes itself through the public C API
(`tree_sitter_java.language()`'s capsule): py-tree-sitter offers no public route to its `Tree`'s C
tree. py-tree-sitter parses a file again only when a node is asked for (`Read`). Both copies of the
runtime must build the same trees, so before the extension is used it must have been built for the
installed version and read a probe file exactly as the Python reader does. When it does not,
that is drift: `PROBLEM` says why, an error is logged and the Python reader is used; in development
(`JAVAKB_DEV_MODE`) the services refuse to start (`app.core.startup_checks.check_readers`), and the pipeline tests
fail (tests/pipeline/test_outline.py). Setting `JAVAKB_NO_EXTENSIONS=1` forces Python (as
`MULTIDICT_NO_EXTENSIONS` does for multidict), for tests and comparisons.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from functools import cache, partial
from importlib import metadata
from types import ModuleType
from typing import NamedTuple, Protocol, cast

from tree_sitter import Tree

from pipeline import outline, tree_outline
from pipeline.outline import Outline
from pipeline.syntax import Path, Span, named_spans, node_path, parse, squash
from pipeline.types import scoped_name

logger = logging.getLogger(__name__)


class Parsed(NamedTuple):
    """A file's outline, and its tree for what reads nodes again: long methods, HTTP client calls, syntax gaps."""

    outline: Outline
    tree: Callable[[], Tree]  # py-tree-sitter's tree (the C reader's files: parsed when first asked)
    locate: Callable[[int, int, str], Path]  # `syntax.node_path` of the tree
    children: Callable[[Path], tuple[Span, ...]]  # `syntax.named_spans` of the tree


OutlineReader = Callable[[bytes], Parsed]


class NativeModule(Protocol):
    """What `pipeline._native` offers: its one declaration (the module has no stub of its own)."""

    TREE_SITTER_VERSION: str

    def bind(self, outline: ModuleType, squash: Callable[[str], str], scoped_name: Callable[[str], str], /) -> None:
        """Give the reader its record classes and the text functions it defers to for non-ASCII text."""

    def read_outline(self, data: bytes, /) -> tuple[Outline, object]:
        """The outline of the Java source `data`, parsed by the extension's own copy of the runtime, and its tree."""

    def locate(self, tree: object, start: int, end: int, kind: str, /) -> Path:
        """`syntax.node_path` in a tree of `read_outline`."""

    def children(self, tree: object, path: Path, /) -> tuple[tuple[str, str | None, int, int, int, int, int], ...]:
        """The named children of the node at `path`: type, field, bytes, rows and index among all children."""

    def probe(self, data: bytes, /) -> tuple[str, int, int, int, int]:
        """The root's type, byte range and child counts as the extension parses `data`."""


# Every construct the C reader treats specially, so that a wrong layout or a wrong reading shows.
PROBE = b"""package p.q;
import static java.util.Objects.requireNonNull;
import java.util.*;
import java.util.List;
/** A probe. */
@SuppressWarnings({"a", "b" + "c"}) @Deprecated(since = "9")
public final class Probe<T> extends Base implements java.io.Serializable, Comparable<Probe<T>> {
    private final @Nullable List<String> names = new ArrayList<>(), more;
    static { init(); }
    /** Builds one. */
    @Autowired public Probe(final @Value("${x}") String name, int... rest) throws Exception { this.names = null; }
    <R> Map.Entry<R, T>[] find(java.util.Map<String, ? extends T> map) {
        var found = new HashMap<String, T>();
        for (String key : map.keySet()) { found.put(key, map.get(key)); }
        try (var in = new FileInputStream("f"); Reader r = open()) { } catch (IOException | RuntimeException e) { }
        if (map instanceof Map<?, ?> m && m.isEmpty()) { return null; }
        switch (map) { case Map<?, ?> /* c */ n -> n.size(); default -> 0; }
        Runnable r = this::toString; Function<String, Integer> f = Integer::parseInt;
        return ((Map) map).entrySet().stream().map(x -> x).toArray(Map.Entry[]::new);
    }
    enum Kind { A { void a() { super.a(); } }, B; ; int z; /** d */ void b() { requireNonNull(z); } }
    record Pair(@Ann int left, String... right) { Pair { java.util.Objects.requireNonNull(left); } }
    @interface Ann { int v() default 1; /** w */ @Deprecated String[] w(); }
    interface Api extends Base, Other { void call(); }
}
class Broken { void m() { int x = ; } reset() }
"""


def check(native: NativeModule, installed: str) -> str | None:
    """Why the C reader must not be used, or None when it agrees with the Python reader.

    It must not when it was built for another tree-sitter, or reads the probe differently.
    """
    if installed != native.TREE_SITTER_VERSION:
        return f"pipeline._native was built for tree-sitter {native.TREE_SITTER_VERSION} but {installed} is installed"
    native.bind(outline, squash, scoped_name)
    tree = parse(PROBE)
    root = tree.root_node
    if native.probe(PROBE) != (root.type, root.start_byte, root.end_byte, root.child_count, root.named_child_count):
        return "pipeline._native does not parse the probe as py-tree-sitter does"
    in_c, in_python = native.read_outline(PROBE)[0], tree_outline.read_outline(tree, PROBE)
    if in_c != in_python:
        return f"pipeline._native reads the probe file differently: {_first_difference(in_c, in_python)}"
    return None


def _first_difference(in_c: Outline, in_python: Outline) -> str:
    for name, a, b in zip(Outline._fields, in_c, in_python, strict=True):
        if a != b:
            return f"{name} differs"
    return "the outlines differ"


DISABLED = bool(os.environ.get("JAVAKB_NO_EXTENSIONS"))
"""Whether `JAVAKB_NO_EXTENSIONS` asks for the Python reader."""


def read_python(data: bytes) -> Parsed:
    """The outline by the Python reader, from py-tree-sitter's tree."""
    tree = parse(data)
    root = tree.root_node
    return Parsed(
        tree_outline.read_outline(tree, data), lambda: tree, partial(node_path, root), partial(named_spans, root)
    )


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


def _load() -> tuple[NativeModule | None, str | None]:
    if DISABLED:
        return None, None
    try:
        module = cast(NativeModule, importlib.import_module("pipeline._native"))
    except ImportError:
        logger.info("pipeline._native is not built (scripts/build_native); using the Python reader")
        return None, None
    problem = check(module, metadata.version("tree-sitter"))
    if problem is not None:
        logger.error("%s; using the Python reader, 1.5x slower (rebuild: scripts/build_native)", problem)
        return None, problem
    return module, None


NATIVE, PROBLEM = _load()
"""The verified C extension (or None), and why a built C reader was refused (or None)."""

read_outline: OutlineReader = native_reader(NATIVE) if NATIVE else read_python
"""The outline of a tree parsed from the given bytes (see `pipeline.outline`)."""
