"""How calls are written: `Receiver.method` with the declared simple type, compact chains, and FQ forms."""

from __future__ import annotations

import pytest

from pipeline.model import Chunk
from tests.support.java import chunk_java, only

HEADER = """package demo;

import java.io.FileInputStream;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import other.Widget;
import lombok.extern.slf4j.Slf4j;
"""


def _method(
    body: str, *, header: str = HEADER, params: str = "List<Object> items, Map.Entry<String, Integer> entry"
) -> Chunk:
    source = f"""{header}
@Slf4j
class Shop extends Base {{
    private final Map<String, Integer> stock = null;
    private Widget widget;

    void run({params}) throws IOException {{
        {body}
    }}

    void helper() {{}}
}}
"""
    return only(chunk_java(source), "demo.Shop.run")


RESOLVED = [
    ("unqualified", "helper();", "Shop.helper", "demo.Shop.helper"),
    ("parameter", "items.size();", "List.size", "java.util.List.size"),
    ("field", "stock.clear();", "Map.clear", "java.util.Map.clear"),
    ("this-field", "this.stock.clear();", "Map.clear", "java.util.Map.clear"),
    ("imported", "widget.turn();", "Widget.turn", "other.Widget.turn"),
    ("super", "super.close();", "Base.close", "demo.Base.close"),
    ("nested-type", "entry.getKey();", "Map.Entry.getKey", "java.util.Map.Entry.getKey"),
    ("static-java-lang", "String.valueOf(1);", "String.valueOf", "java.lang.String.valueOf"),
    ("string-literal", '"abc".trim();', "String.trim", "java.lang.String.trim"),
    ("text-block", '"""\n            text""".strip();', "String.strip", "java.lang.String.strip"),
    ("new", "new Gadget().spin();", "Gadget.spin", "demo.Gadget.spin"),
    ("cast", "((Gadget) items.get(0)).spin();", "Gadget.spin", "demo.Gadget.spin"),
    ("typed-local", "Gadget g = null; g.spin();", "Gadget.spin", "demo.Gadget.spin"),
    ("var-new", "var g = new Gadget<String>(); g.spin();", "Gadget.spin", "demo.Gadget.spin"),
    ("for-each", "for (Widget w : List.<Widget>of()) { w.turn(); }", "Widget.turn", "other.Widget.turn"),
    ("instanceof", "if (items instanceof Gadget g) { g.spin(); }", "Gadget.spin", "demo.Gadget.spin"),
    (
        "catch",
        "try { helper(); } catch (IllegalStateException ex) { ex.getMessage(); }",
        "IllegalStateException.getMessage",
        "java.lang.IllegalStateException.getMessage",
    ),
    (
        "resource",
        'try (FileInputStream in = new FileInputStream("x")) { in.read(); }',
        "FileInputStream.read",
        "java.io.FileInputStream.read",
    ),
    (
        "var-resource",
        'try (var in = new FileInputStream("x")) { in.read(); }',
        "FileInputStream.read",
        "java.io.FileInputStream.read",
    ),
    ("lombok-slf4j", 'log.info("x");', "Logger.info", "org.slf4j.Logger.info"),
    ("this-reference", "Runnable r = this::helper;", "Shop.helper", "demo.Shop.helper"),
    ("type-reference", "items.forEach(Widget::turn);", "Widget.turn", "other.Widget.turn"),
]


@pytest.mark.parametrize(("body", "call", "call_fq"), [r[1:] for r in RESOLVED], ids=[r[0] for r in RESOLVED])
def test_resolved_receiver(body: str, call: str, call_fq: str) -> None:
    chunk = _method(body)
    assert call in chunk.calls
    assert call_fq in chunk.calls_fq


WRITTEN = [
    ("lambda-parameter", "items.stream().map(x -> x.toString()).toList();", "x.toString"),
    ("chain", "items.stream().map(String::valueOf).toList();", "List.stream().map().toList"),
    ("field-chain", "stock.keySet().iterator().next();", "Map.keySet().iterator().next"),
    ("fluent", "new StringBuilder().append(1).append(2).append(3);", "StringBuilder.append().append"),
    ("fluent-then-other", "new StringBuilder().append(1).append(2).toString();", "StringBuilder.append().toString"),
]


@pytest.mark.parametrize(("body", "call"), [r[1:] for r in WRITTEN], ids=[r[0] for r in WRITTEN])
def test_written_receiver(body: str, call: str) -> None:
    assert call in _method(body).calls


def test_chained_calls_have_no_fq_form() -> None:
    chunk = _method("stock.keySet().iterator();")
    assert (chunk.calls, chunk.calls_fq) == (("Map.keySet", "Map.keySet().iterator"), ("java.util.Map.keySet",))


def test_untyped_receiver_has_no_fq_form() -> None:
    chunk = _method("items.forEach(x -> x.hashCode());")
    assert "x.hashCode" in chunk.calls
    assert not [c for c in chunk.calls_fq if c.endswith(".hashCode")]


def test_wildcard_import_leaves_same_package_names_unresolved() -> None:
    chunk = _method("new Gadget().spin(); items.size();", header=HEADER + "import java.util.concurrent.*;\n")
    assert "Gadget.spin" in chunk.calls
    assert (
        [c for c in chunk.calls_fq if c.endswith(".spin")],
        "java.util.List.size" in chunk.calls_fq,
    ) == ([], True)


def test_statically_imported_method_resolves_through_its_import() -> None:
    chunk = _method("requireNonNull(items);", header=HEADER + "import static java.util.Objects.requireNonNull;\n")
    assert (chunk.calls, chunk.calls_fq) == (("Objects.requireNonNull",), ("java.util.Objects.requireNonNull",))


def test_statically_imported_method_resolves_despite_wildcard_imports() -> None:
    header = HEADER + "import java.util.concurrent.*;\nimport static java.util.Objects.requireNonNull;\n"
    chunk = _method("requireNonNull(items);", header=header)
    assert chunk.calls_fq == ("java.util.Objects.requireNonNull",)


def test_fully_qualified_receiver_is_written_as_its_simple_type() -> None:
    chunk = _method("java.util.Objects.requireNonNull(items);")
    assert (chunk.calls, chunk.calls_fq) == (("Objects.requireNonNull",), ("java.util.Objects.requireNonNull",))


def test_array_receiver_resolves_its_element_type() -> None:
    chunk = _method("items.toArray(Widget[]::new);")
    assert "other.Widget[].new" in chunk.calls_fq
    assert not [c for c in chunk.calls_fq if c.startswith("demo.Widget")]


def test_type_variable_receiver_is_not_qualified() -> None:
    source = (
        "package demo;\nclass Box<T extends Comparable<T>> {\n"
        "    T item;\n    int cmp(T other) { return item.compareTo(other); }\n}\n"
    )
    chunk = only(chunk_java(source), "demo.Box.cmp")
    assert (chunk.calls, chunk.calls_fq) == (("T.compareTo",), ())


def test_calls_are_listed_once() -> None:
    chunk = _method("items.size(); items.size(); helper(); helper();")
    assert sorted(chunk.calls) == ["List.size", "Shop.helper"]
