"""What the outline reader (`pipeline._native`, the pipeline's one reader) reads, and how it is loaded.

The reader is checked against expected outlines of tricky sources, against py-tree-sitter's tree of the
same bytes (`locate` and `children`, which the splitter asks) on tricky sources, every fixture file and
random token soup; and importing the pipeline without it fails, naming `scripts/build_native`.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from tree_sitter import Node

from pipeline import native
from pipeline.calls import chain_suffix
from pipeline.members import is_configuration, member_name, signature
from pipeline.model import ChunkerConfig
from pipeline.native import NativeModule, Parsed, read_outline
from pipeline.outline import Outline, Receiver
from pipeline.source import Decoded, decode_source
from pipeline.syntax import Span
from tests.pipeline.test_robustness import JAVA_TOKENS
from tests.support.java_fixtures import JAVA_FIXTURES

ROOT = Path(native.__file__).resolve().parents[1]
FIXTURE_FILES = sorted(
    p
    for p in JAVA_FIXTURES.rglob("*.java")
    if isinstance(decode_source(p.read_bytes(), p.name, ChunkerConfig()), Decoded)  # as the parser sees them
)

TRICKY = {
    "syntax-errors": "class A { void m() { int x = ; foo(; } reset() }\n}} class B { int y = 1 +; }",
    "missing-tokens": "class A { void m() { foo() } int f( { }",
    "only-garbage": "@@ ;; }}} (( int",
    "unicode": (
        "package ünï;\nclass Größe<Ä> extends Bäse { /** Grüße, Welt. Mehr. */ void grüß(Straße s, Ä… a) {"
        ' s.fahr("ö"); Größe.this.x(); } String 名前 = "名前";\n  Map<\u00a0String ,\u00a0Ä\u00a0> m; }'
    ),
    "nested-anonymous-local": (
        "class Outer { class Inner { class Deep { void d() { } } } void m() {\n"
        "  class Local { void l() { new Runnable() { public void run() { go(); } }.run(); } }\n"
        "  Runnable r = () -> { class InLambda { void x() {} } }; } enum E { A { void a() {} }, B }\n"
        "  interface I { default void i() { class InDefault {} } } }"
    ),
    "lambdas": (
        "class L { void m(List<String> xs) { xs.stream().map(s -> s.trim()).filter((String s) -> !s.isEmpty())"
        ".forEach(System.out::println); Function<Integer, int[]> f = int[]::new; Supplier<L> s = L::new;"
        " BiFunction<A, B, C> g = (a, b) -> a.apply(b); } }"
    ),
    "receivers": (
        "import static java.util.Objects.requireNonNull; import java.util.Map;\n"
        "class R extends Base { Repo repo; void m(Owner owner) { var v = new Builder<X>(); var w = make();"
        " requireNonNull(owner); repo.find(owner.id).map(x -> x).orElse(null); this.repo.save(owner);"
        " super.m(owner); java.util.Objects.hash(1); Map.Entry.comparingByKey(); ((Repo) o).find(1);"
        " \"s\".length(); 'c'.x(); (a.b).c(); foo().bar().bar().baz(); new R().m(null); this.field.x();"
        " v.build(); w.go(); int[] arr = {}; arr.clone(); String.valueOf(1); x.<T>cast(y);"
        " try (var in = new FileInputStream(f); Reader rd = open()) { in.read(); }"
        " catch (IOException | RuntimeException e) { e.printStackTrace(); }"
        " for (var item : items) { item.use(); } if (o instanceof Owner own) { own.pet(); }"
        " switch (o) { case Pet p -> p.name(); case Owner /* c */ q -> q.id(); default -> {} } } }"
    ),
    "annotations": (
        '@RestController @RequestMapping({"/api", "/v" + "2"}) @Deprecated(since = "9", forRemoval = true)\n'
        'public class C { @GetMapping(path = "/{id}", produces = MediaType.JSON) public @ResponseBody X get('
        '@PathVariable("id") final Long id, @Value("${a}") String a) { return null; }\n'
        "@RequestMapping(method = {RequestMethod.POST, PUT}) void post() {} @org.x.Y(/* c */ 1) int f; }"
    ),
    "records-and-enums": (
        "record P<T>(@A int x, T... ys) implements I { P { requireNonNull(ys); } static { init(); }"
        " /** Makes. */ static P of() { return new P(1); } }\n"
        "enum E implements I { A(1) { @Override void f() { } }, B(2); private final int v; E(int v) { this.v = v; }"
        " abstract void f(); }\n@interface Ann { int v() default 1; String[] names() default {}; }"
    ),
    "javadoc-and-comments": (
        "/** Type. */ // trailing\n/* block */ class D { /** one */ // line\n void a() {}\n"
        " /**/ void b() {} /** two */ /* plain */ void c() {} /** three */ @X void d() {} }"
    ),
    "text-blocks-and-literals": (
        'class T { String s = """\n  text "block"\n  """; char c = \'\\n\'; void m() { """x""".strip(); '
        "0x1FL.toString(); } }"
    ),
    "deep-nesting": "class N { Object m() { return " + "(" * 300 + "x" + ")" * 300 + "; } }",
}


def _outline(source: bytes) -> Outline:
    return read_outline(source).outline


def _text(source: str | bytes) -> bytes:
    return source.encode("utf-8") if isinstance(source, str) else source


# --------------------------------------------------------------------------------------- what it reads


def test_nested_anonymous_and_local_classes() -> None:
    found = _outline(_text(TRICKY["nested-anonymous-local"]))
    names = [(t.nested_name, found.types[t.outer].name if t.outer >= 0 else None) for t in found.types]
    assert names == [
        ("Outer", None),
        ("Outer.Inner", "Outer"),
        ("Outer.Inner.Deep", "Inner"),
        ("Outer.Local", "Outer"),  # a local class: named after its type, not its method
        ("Outer.InLambda", "Outer"),
        ("Outer.E", "Outer"),
        ("Outer.I", "Outer"),
        ("Outer.I.InDefault", "I"),
    ]
    enum = found.types[5]
    constant = next(m for m in enum.members if m.kind == "enum_constant" and m.name == "A")
    assert [(m.owner, m.name, signature(m)) for m in constant.members] == [("Outer.E.A", "a", "a(): void")]


def test_calls_keep_document_order_and_rows() -> None:
    found = _outline(_text(TRICKY["lambdas"]))
    assert [(c.name, c.receiver, c.text or c.root_text, chain_suffix(c.links)) for c in found.calls] == [
        ("stream", Receiver.IDENTIFIER, "xs", ""),
        ("map", Receiver.CHAIN, "xs", ".stream()"),
        ("trim", Receiver.IDENTIFIER, "s", ""),
        ("filter", Receiver.CHAIN, "xs", ".stream().map()"),
        ("isEmpty", Receiver.IDENTIFIER, "s", ""),
        ("forEach", Receiver.CHAIN, "xs", ".stream().map().filter()"),
        ("apply", Receiver.IDENTIFIER, "a", ""),
        ("println", Receiver.DOTTED, "System.out", ".out"),  # references come after invocations of their row
        ("new", Receiver.CHAIN, "int[]", ""),
        ("new", Receiver.IDENTIFIER, "L", ""),
    ]


def test_receivers_are_taken_apart() -> None:
    calls = {(c.name, c.row): c for c in _outline(_text(TRICKY["receivers"])).calls}
    by_name = {name: call for (name, _), call in calls.items()}
    assert (by_name["requireNonNull"].receiver, by_name["requireNonNull"].text) == (Receiver.NONE, "")
    assert (by_name["orElse"].root, by_name["orElse"].root_text, chain_suffix(by_name["orElse"].links)) == (
        Receiver.IDENTIFIER,
        "repo",
        ".find().map()",
    )
    assert (by_name["save"].root, by_name["save"].root_text, by_name["save"].alt) == (
        Receiver.FIELD,
        "repo",
        "this.repo",
    )
    assert by_name["hash"].receiver == Receiver.DOTTED and by_name["hash"].text == "java.util.Objects"
    assert (by_name["length"].root, by_name["length"].root_text) == (Receiver.TYPED, "String")
    assert (by_name["build"].receiver, by_name["build"].text) == (Receiver.IDENTIFIER, "v")
    assert by_name["baz"].links == ("foo()", "bar()", "bar()")
    assert (by_name["baz"].root_text, chain_suffix(by_name["baz"].links)) == ("", ".foo().bar()")  # a fluent run once
    assert by_name["baz"].root == Receiver.ORPHAN


def test_local_declarations_with_var_and_patterns() -> None:
    decls = [(d.name, d.type) for d in _outline(_text(TRICKY["receivers"])).decls]
    assert decls == [
        ("owner", "Owner"),
        ("v", "Builder"),  # var x = new T<>() states its type
        ("w", ""),  # var from a call does not
        ("arr", "int[]"),
        ("in", "FileInputStream"),
        ("rd", "Reader"),
        ("e", "IOException"),
        ("item", ""),
        ("own", "Owner"),
        ("p", "Pet"),
        ("q", "Owner"),
        ("q", "/* c */"),  # the query's reading of a comment between a pattern's type and name, kept
    ]


def test_members_signatures_modifiers_and_javadoc() -> None:
    data = _text(TRICKY["records-and-enums"])
    record, enum, ann = _outline(data).types
    assert [(f.name, f.type, [a.name for a in f.modifiers.annotations]) for f in record.fields] == [("x", "int", ["A"])]
    members = {member_name(m): m for m in record.members}
    assert members["P"].kind == "compact_constructor_declaration" and signature(members["P"]) == "P(int x, T... ys)"
    assert members["<clinit>"].name == "" and members["<clinit>"].head == ""
    assert signature(members["<clinit>"]) == "static {}"
    of = members["of"]
    assert (signature(of), of.type_params, of.returns, of.modifiers.keywords) == ("of(): P", None, "P", ("static",))
    assert data[of.doc_start : of.doc_end] == b"/** Makes. */"
    assert [m.name for m in enum.members if m.kind == "enum_constant"] == ["A", "B"]
    assert [f.name for f in enum.fields] == ["v"]
    assert [m.head for m in ann.members] == ["int v() default 1;", "String[] names() default {};"]


def test_annotation_arguments() -> None:
    found = _outline(_text(TRICKY["annotations"]))
    mapping = found.types[0].modifiers.find("RequestMapping")
    assert mapping is not None and [v.string for v in mapping.values("value")] == ["/api", "/v2"]
    get = next(m for m in found.types[0].members if m.name == "get")
    annotation = get.modifiers.find("GetMapping")
    assert annotation is not None
    assert [(v.text, v.string) for v in annotation.values("produces")] == [("MediaType.JSON", "${MediaType.JSON}")]
    assert [(p.name, is_configuration(p)) for p in get.params] == [("id", False), ("a", True)]
    post = next(m for m in found.types[0].members if m.name == "post")
    methods = post.modifiers.find("RequestMapping")
    assert methods is not None and [v.text for v in methods.values("method")] == ["RequestMethod.POST", "PUT"]


def test_syntax_errors_are_flagged_where_they_are() -> None:
    first, second = _outline(_text(TRICKY["syntax-errors"])).types
    assert (first.name, first.has_error, first.body_error) == ("A", True, True)
    m = next(m for m in first.members if m.name == "m")
    assert (m.has_error, m.outside_error) == (True, False)  # the error is inside the body
    assert second.name == "B" and second.has_error


def test_unicode_names_and_white_space() -> None:
    data = _text(TRICKY["unicode"])
    found = _outline(data)
    (t,) = found.types
    assert (found.package, t.name, t.extends) == ("ünï", "Größe", ("Bäse",))
    method = next(m for m in t.members if m.name == "grüß")
    assert signature(method) == "grüß(Straße s, Ä a): void"  # `…` is no identifier: an error, left out
    assert data[method.start : method.end].decode().startswith("void grüß")  # offsets are bytes
    assert [(f.name, f.type) for f in t.fields] == [("名前", "String"), ("m", "Map")]
    # squash() keeps inner no-break spaces when the text has no newline, tab or double space
    assert t.members[-1].head == "Map<\u00a0String ,\u00a0Ä\u00a0> m;"


def test_a_deeply_nested_expression_is_read() -> None:
    (t,) = _outline(_text(TRICKY["deep-nesting"])).types
    assert [m.name for m in t.members] == ["m"]


# --------------------------------------------------------------------------------------- its tree and py-tree-sitter's


def _node_at(root: Node, path: tuple[int, ...]) -> Node:
    node = root
    for index in path:
        node = node.children[index]
    return node


def _as_span(parent: Node, index: int, path: tuple[int, ...]) -> Span:
    c = parent.children[index]
    return Span(
        c.type, parent.field_name_for_child(index), c.start_byte, c.end_byte, c.start_point.row, c.end_point.row, path
    )


def _check_nodes_against_py_tree_sitter(parsed: Parsed) -> int:
    """Each member `locate`s to py-tree-sitter's node; each named node below it is as py-tree-sitter has it."""
    root, seen = parsed.tree().root_node, 0
    for decl in (m for t in parsed.outline.types for m in t.members):
        path = parsed.locate(decl.start, decl.end, decl.kind)
        node = _node_at(root, path)
        assert (node.type, node.start_byte, node.end_byte) == (decl.kind, decl.start, decl.end)
        stack = [path]
        while stack:  # every named node below the member, as the splitter may ask for it
            at = stack.pop()
            parent = _node_at(root, at)
            expected = tuple(_as_span(parent, i, (*at, i)) for i, c in enumerate(parent.children) if c.is_named)
            assert parsed.children(at) == expected
            seen += len(expected)
            stack.extend(s.path for s in expected)
    return seen


def _soup(seed: int) -> bytes:
    rng = random.Random(seed)
    return " ".join(rng.choice(JAVA_TOKENS) for _ in range(rng.randrange(1, 2000))).encode()


@pytest.mark.parametrize("name", sorted(set(TRICKY) - {"only-garbage"}))  # that one has no member
def test_the_nodes_of_tricky_java_are_py_tree_sitters(name: str) -> None:
    """The extension's own parse builds py-tree-sitter's tree: outline offsets index `Parsed.tree()`."""
    assert _check_nodes_against_py_tree_sitter(read_outline(_text(TRICKY[name]))) > 0


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[str(p.relative_to(JAVA_FIXTURES)) for p in FIXTURE_FILES])
def test_the_nodes_of_a_fixture_file_are_py_tree_sitters(path: Path) -> None:
    decoded = decode_source(path.read_bytes(), path.name, ChunkerConfig())
    assert isinstance(decoded, Decoded), decoded  # UTF-8 now, as the parser sees it
    parsed = read_outline(decoded.data)
    assert parsed.outline.types or path.name in ("package-info.java", "module-info.java"), path
    _check_nodes_against_py_tree_sitter(parsed)


@pytest.mark.parametrize("seed", range(20))
def test_token_soup_is_read_and_its_nodes_are_py_tree_sitters(seed: int) -> None:
    data = _soup(seed)
    parsed = read_outline(data)
    assert parsed.tree().root_node.end_byte == len(data)
    _check_nodes_against_py_tree_sitter(parsed)


def test_the_c_reader_parses_the_bytes_itself_and_the_tree_comes_on_demand() -> None:
    data = _text(TRICKY["syntax-errors"])
    parsed = read_outline(data)
    assert parsed.outline.has_error
    assert parsed.tree() is parsed.tree()  # parsed once, when asked
    assert parsed.tree().root_node.end_byte == len(data)


# --------------------------------------------------------------------------------------- how it is loaded

CSRC = ROOT / "pipeline" / "csrc"
PUBLIC_INCLUDES = {'"outline.h"', '"tree_sitter/api.h"'}


def test_the_c_reader_uses_only_the_public_tree_sitter_api() -> None:
    """No private header of the runtime, and no restated layout of a py-tree-sitter object (issue 25)."""
    sources = sorted([*CSRC.glob("*.c"), *CSRC.glob("*.h")])
    assert sources
    for path in sources:
        code = path.read_text(encoding="utf-8")
        included = {line.split(None, 1)[1].strip() for line in code.splitlines() if line.startswith("#include")}
        assert {i for i in included if not i.startswith("<")} <= PUBLIC_INCLUDES, path.name
        assert "PyObject_HEAD" not in code, f"{path.name} restates a Python object's layout"


def test_the_one_reader_is_the_c_extension() -> None:
    assert native.NATIVE.__name__ == "pipeline._native"  # type: ignore[attr-defined]
    assert read_outline(b"class A { void m() {} }").outline.types[0].name == "A"


def _import_pipeline_with(native_module: str) -> subprocess.CompletedProcess[str]:
    """Import the pipeline in a fresh interpreter where `pipeline._native` is what `native_module` makes it."""
    code = f"import sys, types\n{native_module}\nimport pipeline.chunking\n"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_pipeline_does_not_import_without_the_extension() -> None:
    done = _import_pipeline_with("sys.modules['pipeline._native'] = None  # not built")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: pipeline._native is not built (")
    assert last.endswith("run scripts/build_native (it needs a C compiler and the Python headers)")


def test_the_pipeline_does_not_import_with_an_extension_built_for_another_tree_sitter() -> None:
    stale = "m = types.ModuleType('pipeline._native'); m.TREE_SITTER_VERSION = '0.0.1'; sys.modules[m.__name__] = m"
    done = _import_pipeline_with(stale)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: pipeline._native was built for tree-sitter 0.0.1 but 0.26.1 is installed: ")
    assert last.endswith("run scripts/build_native (it needs a C compiler and the Python headers)")


def test_a_build_for_the_installed_tree_sitter_is_used() -> None:
    built: NativeModule = native.NATIVE
    assert native.stale(built, built.TREE_SITTER_VERSION) is None
    assert native.stale(built, "0.0.1") is not None
