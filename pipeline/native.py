"""The C extension's functions when it is built and checked, else their Python twins.

Three hot spots have a C twin in `pipeline._native` (pipeline/csrc/): reading a tree into an
outline (`pipeline.tree_outline`), rendering a chunk's text, hash and id (`pipeline.render`) and
summarizing a javadoc (`pipeline.javadoc`). Each twin gives what the Python function gives.

The extension is compiled by `scripts/build_native` against the sources of the exact
tree-sitter release that is installed (pinned in pyproject.toml): it reads py-tree-sitter's
`Tree` object and the C tree behind it, whose layouts belong to that release. So it is only used
when the installed version is the one it was built for and, on a probe file, it gives the same
outline as the Python reader, renders probe chunks and summarizes probe javadocs as Python does.
Setting `JAVAKB_NO_EXTENSIONS=1` forces Python (as `MULTIDICT_NO_EXTENSIONS` does for multidict),
for tests and comparisons.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from importlib import metadata
from types import ModuleType
from typing import Protocol

from tree_sitter import Tree

from pipeline import javadoc, outline, render, tree_outline
from pipeline.outline import Outline
from pipeline.render import ChunkRenderer, RenderArgs
from pipeline.syntax import parse, squash
from pipeline.types import scoped_name

logger = logging.getLogger(__name__)

OutlineReader = Callable[[Tree, bytes], Outline]


class NativeModule(Protocol):
    """What `pipeline._native` offers (see `pipeline/_native.pyi`)."""

    TREE_SITTER_VERSION: str
    render_chunk: ChunkRenderer

    def bind(
        self,
        outline: ModuleType,
        squash: Callable[[str], str],
        scoped_name: Callable[[str], str],
        sha256: Callable[[bytes], object],
        sha1: Callable[[bytes], object],
        summarize: Callable[[str], str | None],
        /,
    ) -> None:
        """Give the reader its record classes and the Python functions it defers to or calls."""

    def summarize(self, raw: str, /) -> str | None:
        """`pipeline.javadoc.summarize`."""

    def read_outline(self, tree: Tree, data: bytes, /) -> Outline:
        """The outline of a tree parsed from `data`."""

    def probe(self, tree: Tree, /) -> tuple[str, int, int, int, int]:
        """The root's type, byte range and child counts as the C runtime reads them."""


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
    @interface Ann { int v() default 1; String w(); }
    interface Api extends Base, Other { void call(); }
}
class Broken { void m() { int x = ; } reset() }
"""


def native_reader(native: NativeModule, installed: str) -> OutlineReader | None:
    """The C reader, if it was built for the installed tree-sitter and reads the probe as Python does."""
    if installed != native.TREE_SITTER_VERSION:
        logger.warning(
            "pipeline._native was built for tree-sitter %s but %s is installed; using the Python reader",
            native.TREE_SITTER_VERSION,
            installed,
        )
        return None
    native.bind(outline, squash, scoped_name, hashlib.sha256, hashlib.sha1, javadoc.summarize)
    tree = parse(PROBE)
    root = tree.root_node
    if native.probe(tree) != (root.type, root.start_byte, root.end_byte, root.child_count, root.named_child_count):
        logger.warning("pipeline._native does not read py-tree-sitter's trees; using the Python reader")
        return None
    if native.read_outline(tree, PROBE) != tree_outline.read_outline(tree, PROBE):
        logger.warning("pipeline._native reads the probe file differently; using the Python reader")
        return None
    if any(native.render_chunk(*args) != render.render_chunk(*args) for args in _RENDER_PROBES):
        logger.warning("pipeline._native renders chunks differently; using Python")
        return None
    if any(native.summarize(doc) != javadoc.summarize(doc) for doc in _JAVADOC_PROBES):
        logger.warning("pipeline._native summarizes javadoc differently; using Python")
        return None
    return native.read_outline


_JAVADOC_PROBES = [
    "/** Returns the size. More text. */",
    "/**\n * Returns {@code x} for {@link Map#get(Object) the key}, see {@link A#b}. <p>More.\n * @param x x\n */",
    "/**\n * <pre>code</pre> the <b>bold</b> tail\n * {@code a {b} c}. Then {@literal <x>} and e.g. this.\n */",
    "/** @return nothing */",
    "/** Ünïcode. */",
    "/**/",
]
# A short chunk, and one with every header line, a part number, over 24 calls and non-ASCII text.
_RENDER_PROBES: list[RenderArgs] = [
    ("r", "", "A", "class", None, "class A", (), (), (), (), None, "class A {}", 0, 1, b"p", "type:A"),
    (
        "acme/shop",
        "com.acme",
        "com.acme.A.m",
        "method",
        "service",
        "m(int x): Größe",
        ("@A", "@B(1)"),
        ("GET", "ANY"),
        ("/a", "/b"),
        tuple(f"T.c{i}" for i in range(30)),
        "Sums. Ünïcode.",
        "  int m() {\n    return 1;\n  }",
        2,
        3,
        b"\x00prefix",
        "A.m(int)",
    ),
]


DISABLED = bool(os.environ.get("JAVAKB_NO_EXTENSIONS"))
"""Whether `JAVAKB_NO_EXTENSIONS` asks for the Python reader."""


def _load() -> OutlineReader | None:
    if DISABLED:
        return None
    try:
        from pipeline import _native
    except ImportError:
        logger.info("pipeline._native is not built (scripts/build_native); using the Python reader")
        return None
    return native_reader(_native, metadata.version("tree-sitter"))


NATIVE = _load()
"""The verified C reader, or None."""

read_outline: OutlineReader = NATIVE or tree_outline.read_outline
"""The outline of a tree parsed from the given bytes (see `pipeline.outline`)."""


def _renderer() -> ChunkRenderer:
    if NATIVE is None:
        return render.render_chunk
    from pipeline import _native

    return _native.render_chunk


render_chunk: ChunkRenderer = _renderer()
"""A chunk's embedding text, content hash and id (see `pipeline.render.render_chunk`)."""


def _summarizer() -> Callable[[str], str | None]:
    if NATIVE is None:
        return javadoc.summarize
    from pipeline import _native

    return _native.summarize


summarize: Callable[[str], str | None] = _summarizer()
"""The first sentence of a javadoc comment (see `pipeline.javadoc.summarize`)."""
