"""Kotlin sources into the same chunks as Java's (issue 29): a table of snippets and the chunks each gives."""

from __future__ import annotations

import subprocess
import sys
from itertools import pairwise
from typing import Any, Final

import pytest

from pipeline.kotlin.chunker import facade_name
from pipeline.languages import chunk_file as chunk_source
from pipeline.model import Chunk, ChunkerConfig, FileResult, SkipReason, SourceContext, SymbolType
from pipeline.scope import Scope

PATH: Final = "svc/src/main/kotlin/com/acme/Owners.kt"
CONTROLLER: Final = """package com.acme.web

import org.springframework.web.bind.annotation.*
import com.acme.core.OwnerRepository

/** Owners over HTTP. Read and written here. */
@RestController
@RequestMapping("/api/owners", "/v1/owners")
class OwnerController(private val owners: OwnerRepository, @Value("\\${page.size}") private val size: Int) {

    /**
     * Finds one owner.
     */
    @GetMapping(value = ["/{id}", "/by-id/{id}"])
    suspend fun find(@PathVariable id: Long): Owner? = owners.findById(id)

    @RequestMapping(path = ["/search"], method = [RequestMethod.POST, RequestMethod.PUT])
    fun search(@RequestBody query: Query): List<Owner> {
        return owners.search(query)
    }

    @PostMapping
    fun create(@RequestBody owner: Owner): Owner = owners.save(owner)
}
"""
SERVICE: Final = """package com.acme.core

@Service
class OwnerService(private val repo: OwnerRepository, private val handlers: List<Handler>) {
    constructor(repo: OwnerRepository) : this(repo, emptyList())

    val count: Int
        get() = repo.count()

    @Autowired
    lateinit var clock: Clock

    var plain: Int = 0

    companion object {
        const val LIMIT = 10
        fun create(): OwnerService = TODO()
    }
}
"""
SHAPES: Final = """package com.acme.model

data class Owner(val id: Long, val name: String)

object Registry {
    fun register(owner: Owner) {}
}

interface PricingPolicy {
    fun price(visit: Visit): Money
}

enum class Kind { CAT, DOG }

fun <T : Any> List<T>.second(): T = this[1]

fun String.shout(times: Int = 1): String = uppercase().repeat(times)

val Owner.display: String
    get() = name
"""
BEANS: Final = """package com.acme.config

@Component
class Mailer @Autowired constructor(private val sender: Sender) {
    constructor() : this(Sender())
}

@Configuration
class AppConfig {
    @Bean
    fun mailer(sender: Sender, templates: Optional<Templates>): Mailer = Mailer(sender)
}
"""
CLIENTS: Final = """package com.acme.clients

@FeignClient(name = "billing", path = "/api")
interface BillingClient {
    @GetMapping("/invoices/{id}")
    fun invoice(@PathVariable id: Long): Invoice
}

@HttpExchange("http://accounts/v1")
interface AccountsApi {
    @PostExchange("/accounts")
    suspend fun open(@RequestBody request: OpenAccount): Account
}
"""
CALLS: Final = """package com.acme.calls

import com.acme.core.OwnerRepository

class Reports(private val owners: OwnerRepository) : Base() {
    private val cache: Cache = Cache()

    fun report(id: Long, printer: Printer) {
        val owner: Owner = owners.findById(id)
        val sheet = Sheet(owner)
        sheet.fill(owner.name())
        printer.print(sheet)
        this.cache.put(id, sheet)
        owners.findAll().first().visit()
        flush()
    }

    fun flush() {}
}
"""


def chunk(source: str, path: str = PATH) -> FileResult:
    return chunk_source(source.encode(), path, SourceContext(repo_path="acme/shop"), ChunkerConfig())


def by_name(result: FileResult) -> dict[str, Chunk]:
    found: dict[str, Chunk] = {}
    for c in result.chunks:  # the first of overloads
        found.setdefault(c.qualified_name, c)
    return found


# (source, qualified name, expected fields of its chunk)
TABLE: Final[list[tuple[str, str, dict[str, Any]]]] = [
    (CONTROLLER, "com.acme.web.OwnerController", {
        "symbol_type": SymbolType.CLASS, "stereotype": "rest_controller", "javadoc_summary": "Owners over HTTP.",
        "annotation_names": ("RestController", "RequestMapping"), "injects": ("OwnerRepository",),
        "injects_fq": ("com.acme.core.OwnerRepository",), "language": "kotlin", "enclosing_type": None,
    }),
    (CONTROLLER, "com.acme.web.OwnerController.OwnerController", {
        "symbol_type": SymbolType.CONSTRUCTOR, "injects": ("OwnerRepository",),
        "parameter_types": ("OwnerRepository", "Int"),
        "signature": "OwnerController(owners: OwnerRepository, size: Int)",
    }),
    (CONTROLLER, "com.acme.web.OwnerController.find", {
        "symbol_type": SymbolType.METHOD, "modifiers": ("suspend",), "http_method": ("GET",),
        "http_path": ("/api/owners/{id}", "/api/owners/by-id/{id}", "/v1/owners/{id}", "/v1/owners/by-id/{id}"),
        "javadoc_summary": "Finds one owner.", "signature": "suspend find(id: Long): Owner?",
        "annotations": ("@GetMapping(value = [\"/{id}\", \"/by-id/{id}\"])",), "line_start": 11, "line_end": 15,
        "enclosing_type": "com.acme.web.OwnerController", "stereotype": "rest_controller",
    }),
    (CONTROLLER, "com.acme.web.OwnerController.search", {
        "calls": ("OwnerRepository.search",), "calls_fq": ("com.acme.core.OwnerRepository.search",),
        "http_method": ("POST", "PUT"), "http_path": ("/api/owners/search", "/v1/owners/search"),
        "parameter_types": ("Query",),
    }),
    (CONTROLLER, "com.acme.web.OwnerController.create", {
        "http_method": ("POST",), "http_path": ("/api/owners", "/v1/owners"),
    }),
    (SERVICE, "com.acme.core.OwnerService", {
        "stereotype": "service", "injects": ("OwnerRepository", "Handler", "Clock"),
    }),
    (SERVICE, "com.acme.core.OwnerService.OwnerService", {  # the primary constructor is Spring's choice
        "symbol_type": SymbolType.CONSTRUCTOR, "injects": ("OwnerRepository", "Handler"), "line_start": 4,
    }),
    (SERVICE, "com.acme.core.OwnerService.count", {"symbol_type": SymbolType.METHOD, "signature": "val count: Int"}),
    (SERVICE, "com.acme.core.OwnerService.clock", {"injects": ("Clock",), "annotation_names": ("Autowired",)}),
    (SERVICE, "com.acme.core.OwnerService.Companion", {
        "symbol_type": SymbolType.CLASS, "modifiers": ("companion", "object"),
        "enclosing_type": "com.acme.core.OwnerService",
    }),
    (SERVICE, "com.acme.core.OwnerService.Companion.create", {
        "enclosing_type": "com.acme.core.OwnerService.Companion",
    }),
    (SHAPES, "com.acme.model.Owner", {"symbol_type": SymbolType.CLASS, "modifiers": ("data",)}),
    (SHAPES, "com.acme.model.Owner.Owner", {"symbol_type": SymbolType.CONSTRUCTOR, "injects": ()}),
    (SHAPES, "com.acme.model.Registry", {"modifiers": ("object",), "signature": "object Registry"}),
    (SHAPES, "com.acme.model.PricingPolicy", {"symbol_type": SymbolType.INTERFACE}),
    (SHAPES, "com.acme.model.PricingPolicy.price", {
        "symbol_type": SymbolType.METHOD, "signature": "price(visit: Visit): Money",
    }),
    (SHAPES, "com.acme.model.Kind", {"symbol_type": SymbolType.ENUM}),
    (SHAPES, "com.acme.model.OwnersKt.second", {
        "signature": "<T : Any> List<T>.second(): T", "enclosing_type": "com.acme.model.OwnersKt",
    }),
    (SHAPES, "com.acme.model.OwnersKt.shout", {
        "signature": "String.shout(times: Int): String", "parameter_types": ("Int",),
    }),
    (SHAPES, "com.acme.model.OwnersKt.display", {"signature": "val Owner.display: String"}),
    (CLIENTS, "com.acme.clients.BillingClient", {"stereotype": "feign_client", "symbol_type": SymbolType.INTERFACE}),
    (CLIENTS, "com.acme.clients.BillingClient.invoice", {
        "http_path": ("/api/invoices/{id}",), "outbound": ("feign GET billing /api/invoices/{id}",),
    }),
    (CLIENTS, "com.acme.clients.AccountsApi.open", {
        "http_method": ("POST",), "outbound": ("http_exchange POST accounts /v1/accounts",),
    }),
    (CALLS, "com.acme.calls.Reports.report", {
        "calls": (
            "OwnerRepository.findById", "Sheet.fill", "Owner.name", "Printer.print", "Cache.put",
            "OwnerRepository.findAll", "OwnerRepository.findAll().first", "OwnerRepository.findAll().first().visit",
            "Reports.flush",
        ),
        "calls_fq": (  # types of the file's package resolve to it, as in Java
            "com.acme.core.OwnerRepository.findById", "com.acme.calls.Sheet.fill", "com.acme.calls.Owner.name",
            "com.acme.calls.Printer.print", "com.acme.calls.Cache.put", "com.acme.core.OwnerRepository.findAll",
            "com.acme.calls.Reports.flush",
        ),
    }),
    (BEANS, "com.acme.config.Mailer.Mailer", {"injects": ("Sender",), "parameter_types": ("Sender",)}),
    (BEANS, "com.acme.config.AppConfig.mailer", {"injects": ("Sender", "Templates")}),
]  # fmt: skip


@pytest.mark.parametrize(("source", "name", "expected"), TABLE, ids=[t[1] for t in TABLE])
def test_a_kotlin_snippet_gives_the_expected_chunk(source: str, name: str, expected: dict[str, Any]) -> None:
    result = chunk(source)
    assert not result.skipped
    chunks = by_name(result)
    assert name in chunks, sorted(chunks)
    got = chunks[name]
    assert {k: getattr(got, k) for k in expected} == expected


def test_plain_properties_and_an_empty_primary_constructor_have_no_chunk_of_their_own() -> None:
    names = set(by_name(chunk(SERVICE)))
    assert "com.acme.core.OwnerService.plain" not in names
    assert "com.acme.core.OwnerService.Companion.LIMIT" not in names
    assert "com.acme.config.AppConfig.AppConfig" not in set(by_name(chunk(BEANS)))


def test_a_secondary_constructor_beside_an_injecting_one_injects_nothing() -> None:
    # `Mailer`'s primary constructor is `@Autowired`: the no-argument one is not an injection point.
    constructors = [c for c in chunk(BEANS).chunks if c.qualified_name == "com.acme.config.Mailer.Mailer"]
    assert [c.injects for c in constructors] == [("Sender",), ()]
    assert len({c.id for c in constructors}) == 2


def test_the_type_chunk_lists_members_with_bodies_elided() -> None:
    code = by_name(chunk(SERVICE))["com.acme.core.OwnerService"].code
    assert "    var plain: Int = 0" in code
    assert "constructor(repo: OwnerRepository) : this(repo, emptyList())" in code
    assert "companion object { ... }" in code
    assert "repo.count()" not in code


def test_every_chunk_is_kotlin_and_java_chunks_stay_java() -> None:
    assert {c.language for c in chunk(SHAPES).chunks} == {"kotlin"}
    java = chunk_source(
        b"class A { void m() {} }", "src/main/java/A.java", SourceContext(repo_path="r"), ChunkerConfig()
    )
    assert {c.language for c in java.chunks} == {"java"}


def test_the_facade_class_is_named_as_kotlinc_names_it() -> None:
    assert facade_name("a/b/Owners.kt") == "OwnersKt"
    assert facade_name("a/owner-utils.kt") == "Owner_utilsKt"


def test_bad_kotlin_is_skipped_with_its_reason_and_the_rest_is_indexed() -> None:
    source = SHAPES.replace("object Registry {", "object Registry {\n    fun broken( {{ = \n    }\n}\n\nobject Other {")
    result = chunk(source)
    assert result.parse_errors
    assert result.skipped and {s.reason for s in result.skipped} == {SkipReason.SYNTAX_ERROR}
    assert all(s.detail.startswith("unparsable code") and s.line_start for s in result.skipped)
    names = set(by_name(result))
    assert {"com.acme.model.PricingPolicy.price", "com.acme.model.OwnersKt.shout", "com.acme.model.Kind"} <= names


def test_nothing_parsable_is_one_skip_of_the_whole_file() -> None:
    result = chunk("}}} ((( not kotlin at all\n")
    assert not result.chunks
    [skipped] = result.skipped
    assert (skipped.reason, skipped.line_start, skipped.line_end) == (SkipReason.SYNTAX_ERROR, 1, 1)
    assert skipped.detail == "unparsable code: }}} ((( not kotlin at all"


def test_a_broken_declaration_is_the_only_part_skipped() -> None:
    source = SHAPES.replace("object Registry {", "object Registry {\n    fun broken( {{ = \n    }\n}\n\nobject Other {")
    [skipped] = chunk(source).skipped  # the broken member only: its object and the rest of the file are indexed
    assert (skipped.line_start, skipped.line_end) == (6, 7)
    assert skipped.detail == "unparsable code: fun broken( {{ = }"
    assert {"com.acme.model.Registry", "com.acme.model.Other.register"} <= set(by_name(chunk(source)))


def test_a_long_function_is_split_into_parts_that_tile_it() -> None:
    body = "\n".join(f'        val v{i} = compute({i}, "{"x" * 40}")' for i in range(400))
    source = f"package p\n\nclass Big {{\n    fun long() {{\n{body}\n    }}\n}}\n"
    parts = [c for c in chunk(source).chunks if c.name == "long"]
    assert len(parts) > 1 and {p.symbol_type for p in parts} == {SymbolType.METHOD_PART}
    assert parts[0].line_start == 4 and parts[-1].line_end == 405
    assert all(a.line_end + 1 == b.line_start for a, b in pairwise(parts))


def test_the_default_scope_takes_kotlin_sources_as_it_takes_java_ones() -> None:
    scope = Scope.from_config(ChunkerConfig())
    assert scope.matches("svc/src/main/kotlin/com/acme/Owners.kt")
    assert scope.matches("svc/src/main/java/com/acme/Owner.java")
    assert not scope.matches("svc/src/test/kotlin/com/acme/OwnersTest.kt")
    assert not scope.matches("build.gradle.kts")


def test_generated_kotlin_is_marked_as_generated_java_is() -> None:
    stated = "// Code generated by protoc-gen-kotlin. DO NOT EDIT.\npackage p\n\nobject Dsl {\n    fun a() {}\n}\n"
    assert {c.generated for c in chunk(stated).chunks} == {True}
    annotated = "package p\n\n@Generated\nclass Made {\n    fun a() {}\n}\n\nclass Written {\n    fun b() {}\n}\n"
    assert {c.qualified_name: c.generated for c in chunk(annotated).chunks} == {
        "p.Made": True, "p.Made.a": True, "p.Written": False, "p.Written.b": False,
    }  # fmt: skip


def test_a_source_cut_inside_an_annotation_string_parses_in_bounded_time() -> None:
    # Without a final newline the 1.1.0 grammar's scanner loops forever on this (found by fuzzing Exposed):
    # run in a child process, so that a regression fails here instead of hanging the suite.
    source = (
        "@SpringBootTest(\nclass JdbcTemplateTests {\n        transaction {\n"
        "    lateinit var bookService: BookService\n"
        '    @RepeatedTest(15, name = "Without }}spring transaction: {currentRepetition}/{to'
    )
    code = (
        "import sys\nfrom pipeline.languages import chunk_file\n"
        "from pipeline.model import ChunkerConfig, SourceContext\n"
        "r = chunk_file(sys.stdin.buffer.read(), 'A.kt', SourceContext(repo_path='r'), ChunkerConfig())\n"
        "print(r.parse_errors)"
    )
    done = subprocess.run([sys.executable, "-c", code], input=source.encode(), capture_output=True, timeout=60)
    assert (done.returncode, done.stdout.decode().strip()) == (0, "True"), done.stderr.decode()
