"""Which members become chunks: static initializers, enum constant bodies, interface methods, info files."""

from __future__ import annotations

from pipeline.model import SymbolType
from tests.support.java import chunk_java, only

STATIC_INIT = """package demo;

import java.util.Map;

class Codes {
    static final Map<String, Integer> CODES;

    static {
        CODES = Map.of("a", 1);
        warmUp();
    }

    static void warmUp() {
    }
}
"""


def test_static_initializer_is_a_method_chunk_named_clinit() -> None:
    chunk = only(chunk_java(STATIC_INIT), "demo.Codes.<clinit>")
    assert (chunk.symbol_type, chunk.name, chunk.line_start, chunk.line_end) == (SymbolType.METHOD, "<clinit>", 8, 11)


def test_static_initializer_calls() -> None:
    chunk = only(chunk_java(STATIC_INIT), "demo.Codes.<clinit>")
    assert (sorted(chunk.calls), sorted(chunk.calls_fq)) == (
        ["Codes.warmUp", "Map.of"],
        ["demo.Codes.warmUp", "java.util.Map.of"],
    )


def test_package_info_gives_no_chunk() -> None:
    source = "/** Docs. */\n@NonNullApi\npackage demo;\n\nimport org.springframework.lang.NonNullApi;\n"
    result = chunk_java(source, "src/main/java/demo/package-info.java")
    assert (result.chunks, result.skipped) == ((), ())


def test_module_info_gives_no_chunk() -> None:
    source = "/** The module. */\nmodule demo.core {\n    requires static lombok;\n    exports demo.core;\n}\n"
    result = chunk_java(source, "src/main/java/module-info.java")
    assert (result.chunks, result.skipped) == ((), ())


ENUM = """package demo;

enum Op {
    ADD {
        int apply(int a, int b) {
            return a + b;
        }
    },
    NEG {
        int apply(int a, int b) {
            return -a;
        }

        boolean unary() {
            return true;
        }
    };

    abstract int apply(int a, int b);

    boolean unary() {
        return false;
    }
}
"""


def test_enum_constant_body_methods_are_chunks_named_constant_dot_method() -> None:
    names = sorted(c.qualified_name for c in chunk_java(ENUM).chunks)
    assert names == [
        "demo.Op",
        "demo.Op.ADD.apply",
        "demo.Op.NEG.apply",
        "demo.Op.NEG.unary",
        "demo.Op.apply",
        "demo.Op.unary",
    ]


def test_enum_constant_body_method_span() -> None:
    chunk = only(chunk_java(ENUM), "demo.Op.NEG.unary")
    assert (chunk.line_start, chunk.line_end, chunk.enclosing_type) == (14, 16, "demo.Op.NEG")


INTERFACE = """package demo;

interface Shape {
    double area();

    default String describe() {
        return "area " + area();
    }

    static Shape unit() {
        return () -> 1.0;
    }
}
"""


def test_interface_methods_are_chunks_abstract_ones_included() -> None:
    names = sorted(c.qualified_name for c in chunk_java(INTERFACE).chunks)
    assert names == ["demo.Shape", "demo.Shape.area", "demo.Shape.describe", "demo.Shape.unit"]


ANNOTATION_TYPE = """package demo;

/** Marks a thing. */
@interface Tag {
    /**
     * The tag's name.
     */
    @Deprecated
    String[] value() default {};

    int weight();
}
"""


def test_annotation_elements_are_chunks_with_their_javadoc_and_annotations() -> None:
    result = chunk_java(ANNOTATION_TYPE)
    value = only(result, "demo.Tag.value")
    assert (value.symbol_type, value.signature, value.line_start, value.line_end) == (
        SymbolType.METHOD, "value(): String[]", 5, 9,
    )  # fmt: skip
    assert (value.annotation_names, value.javadoc_summary) == (("Deprecated",), "The tag's name.")
    assert value.code == "    /**\n     * The tag's name.\n     */\n    @Deprecated\n    String[] value() default {};"
    weight = only(result, "demo.Tag.weight")
    assert (weight.signature, weight.line_start, weight.line_end, weight.annotations) == ("weight(): int", 11, 11, ())
    assert "int weight();" in only(result, "demo.Tag").code  # the skeleton still lists them


def test_lambda_stays_inside_its_method() -> None:
    chunk = only(chunk_java(INTERFACE), "demo.Shape.unit")
    assert "return () -> 1.0;" in chunk.code


def test_anonymous_class_method_stays_inside_its_method() -> None:
    source = """package demo;
class A {
    Runnable task() {
        return new Runnable() {
            @Override
            public void run() {
                go();
            }
        };
    }
    void go() {}
}
"""
    result = chunk_java(source)
    assert sorted(c.qualified_name for c in result.chunks) == ["demo.A", "demo.A.go", "demo.A.task"]
    assert "A.go" in only(result, "demo.A.task").calls


def test_local_class_gets_its_own_chunks() -> None:
    source = """package demo;
class A {
    void outer() {
        class Local {
            void inner() {}
        }
        new Local().inner();
    }
}
"""
    result = chunk_java(source)
    assert sorted(c.qualified_name for c in result.chunks) == [
        "demo.A",
        "demo.A.Local",
        "demo.A.Local.inner",
        "demo.A.outer",
    ]


def test_default_package_names_have_no_package_prefix() -> None:
    result = chunk_java("class A {\n    void m() {}\n}\n", "src/main/java/A.java")
    assert [(c.qualified_name, c.package) for c in result.chunks] == [("A", ""), ("A.m", "")]
