"""A bodiless declaration and its implementation, both ranked, are one hit (`app.search.fold`, signal `fold`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL
from app.search import boosts, fold
from app.search.results import hit_block, hit_item, hit_line
from app.search.scoping import Filters
from app.search.service import SearchService
from app.store.filters import any_of
from app.store.vectors import IndexModel, VectorStore
from pipeline.model import Chunk, SymbolType
from tests.app.test_ranking import chunk
from tests.support.engines import write_sources


def method(qualified: str, code: str, *params: str, outbound: tuple[str, ...] = ()) -> Chunk:
    owner, _, name = qualified.rpartition(".")
    base = replace(chunk(name), qualified_name=f"com.acme.{qualified}", enclosing_type=f"com.acme.{owner}")
    return replace(base, code=code, parameter_types=params, outbound=outbound)


def type_chunk(name: str, *, implements: tuple[str, ...] = (), extends: tuple[str, ...] = ()) -> Chunk:
    return replace(
        chunk(name, symbol_type=SymbolType.CLASS, enclosing=None),
        implements=tuple(s.rsplit(".", 1)[-1] for s in implements),
        implements_fq=implements,
        extends=tuple(s.rsplit(".", 1)[-1] for s in extends),
        extends_fq=extends,
    )


DECLARED = method("VerifyService.send", "void send(String to, List<String> codes);", "String", "List<String>")
IMPLEMENTED = method("VerifyServiceImpl.send", "public void send(String to, List<T> c) { mail(to); }", "String", "List")
HANDLER = method("VerifyController.send", "public void send(String to, List<String> c) { s.send(to, c); }", "String")
IMPL_TYPE = type_chunk("VerifyServiceImpl", implements=("com.acme.VerifyService",))


@pytest.mark.parametrize(
    ("code", "modifiers", "language", "expected"),
    [
        ("void send(String to);", (), "java", True),
        ("public abstract void send(String to);", ("abstract",), "java", True),
        ("public void send(String to) { mail(to); }", (), "java", False),
        ("default int size() { return 0; }", ("default",), "java", False),
        ("fun greet(name: String): String", (), "kotlin", True),
        ('fun greet(name: String): String = "hi"', (), "kotlin", False),
        ("fun greet(name: String): String {\n  return name\n}", (), "kotlin", False),
        ("fun greet(name: String) = format(name)", (), "kotlin", False),
        ('@Deprecated("use hi(x)")\nfun greet(name: String): (Int) -> Unit', (), "kotlin", True),
        ("override fun <T> greet(name: T): String where T : CharSequence", (), "kotlin", True),
    ],
)
def test_a_bodiless_method_is_told_by_its_code(
    code: str, modifiers: tuple[str, ...], language: str, expected: bool
) -> None:
    assert fold.bodiless(replace(DECLARED, code=code, modifiers=modifiers, language=language)) is expected


def test_parameter_types_match_without_generics_or_qualifiers() -> None:
    assert fold.signature_key(DECLARED) == fold.signature_key(IMPLEMENTED) == ("send", ("String", "List"))
    assert fold.signature_key(replace(DECLARED, parameter_types=("java.util.Map<K, List<V>>", "int..."))) == (
        "send",
        ("Map", "int[]"),
    )


def test_pairs_are_a_declaration_and_a_body_of_one_signature_in_another_type() -> None:
    chunks = [DECLARED, HANDLER, IMPLEMENTED]
    # the handler takes other parameters; with the same ones it would be a candidate the hierarchy refuses
    assert fold.candidate_pairs(chunks) == [(0, 2)]
    assert fold.candidate_pairs(chunks, exact={0}) == []
    assert fold.candidate_pairs([HANDLER, IMPLEMENTED, DECLARED], within=2) == []  # a declaration below the page
    client = replace(DECLARED, outbound=("client GET stats /stats",))  # a Feign method: its implementer is a fallback
    assert fold.candidate_pairs([client, HANDLER, IMPLEMENTED]) == []


def test_the_hierarchy_decides_which_pairs_fold() -> None:
    same = replace(HANDLER, parameter_types=DECLARED.parameter_types)  # the controller's method, same signature
    chunks = [DECLARED, same, IMPLEMENTED, IMPL_TYPE, type_chunk("VerifyController")]
    pairs = fold.candidate_pairs(chunks)
    parents = fold.known_parents(chunks)

    assert sorted(pairs) == [(0, 1), (0, 2)]
    assert fold.confirmed(chunks, pairs, parents) == [(0, 2)]
    assert fold.undecided(chunks, pairs, parents) == set()
    assert fold.undecided(chunks[:3], pairs, fold.known_parents(chunks[:3])) == {
        "com.acme.VerifyController",
        "com.acme.VerifyServiceImpl",
    }


def test_inheritance_is_followed_through_indexed_supertypes_and_loose_names() -> None:
    parents = {"a.Impl": ("a.Base",), "a.Base": ("Service",), "a.Other": ("lib.Thing",)}

    assert fold.inherits("a.Impl", "b.Service", parents) is True  # an unresolved simple name
    assert fold.inherits("a.Impl", "a.Base", parents) is True
    assert fold.inherits("a.Other", "a.Base", parents) is None  # lib.Thing is not known: the walk must tell
    assert fold.inherits("a.Other", "a.Base", {**parents, "lib.Thing": ()}) is False
    assert fold.inherits("a.Unknown", "a.Base", parents) is None


def test_the_implementation_takes_the_better_place_once() -> None:
    # declaration 0, implementation 3: the implementation shows at 0 and the declaration is gone
    assert fold.folded(5, [(0, 3)]) == ([3, 1, 2, 4], {3: 0})
    # implementation first: it stays, the declaration below it is gone
    assert fold.folded(4, [(2, 0)]) == ([0, 1, 3], {0: 2})


def test_several_implementations_fold_into_the_best_unless_single_only() -> None:
    assert fold.folded(4, [(1, 3), (1, 2)]) == ([0, 2, 3], {2: 1})
    assert fold.folded(4, [(1, 3), (1, 2)], single_only=True) == ([0, 1, 2, 3], {})


def test_an_implementation_takes_one_declaration() -> None:
    order, declaration = fold.folded(4, [(0, 2), (1, 2)])
    assert declaration == {2: 0}
    assert order == [2, 1, 3]


# Through the search service: an interface, its implementation and a controller calling it, each saying
# "verification code" and "email"; with the rule on the interface's declaration is not a hit of its own.
SOURCES = {
    "src/main/java/demo/svc/VerifyService.java": """\
package demo.svc;

public interface VerifyService {
    /** Send a verification code to the user by email. */
    void sendCode(String email);
}
""",
    "src/main/java/demo/svc/impl/VerifyServiceImpl.java": """\
package demo.svc.impl;

import demo.svc.VerifyService;

public class VerifyServiceImpl implements VerifyService {
    @Override
    public void sendCode(String email) {
        String verificationCode = random();
        mail.send(email, "verification code", verificationCode);
    }
}
""",
    "src/main/java/demo/web/VerifyController.java": """\
package demo.web;

import demo.svc.VerifyService;

public class VerifyController {
    private VerifyService verify;

    /** Email a verification code. */
    public void sendCode(String email) {
        verify.sendCode(email);
    }
}
""",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def store() -> AsyncIterator[VectorStore]:
    vectors = VectorStore(AsyncQdrantClient(location=":memory:"), "java_code")
    await vectors.ensure(IndexModel(embedding_model=None, dimension=None))
    await write_sources(vectors, "t/r", SOURCES.items())
    try:
        yield vectors
    finally:
        await vectors.close()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("on", [True, False], ids=["on", "off"])
async def test_search_shows_the_implementation_once_for_its_declaration(
    store: VectorStore, on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not on:
        monkeypatch.setattr(boosts, "DISABLED", boosts.DISABLED | {"fold"})

    hits = await SearchService(store, None).search(LOCAL, "how is a verification code sent by email", limit=10)

    names = [h.qualified_name for h in hits]
    assert "demo.svc.impl.VerifyServiceImpl.sendCode" in names
    assert "demo.web.VerifyController.sendCode" in names  # a caller of the same name is not folded
    assert ("demo.svc.VerifyService.sendCode" in names) is not on
    implementation = next(h for h in hits if h.qualified_name.endswith("VerifyServiceImpl.sendCode"))
    if on:
        assert implementation.declaration is not None
        assert hit_item(implementation)["declared_in"] == "demo.svc.VerifyService.sendCode"
        assert "declared in demo.svc.VerifyService.sendCode" in hit_line(1, implementation)
        assert "declared in demo.svc.VerifyService.sendCode t/r:src/main/java/demo/svc/VerifyService.java:4-5" in (
            hit_block(1, implementation, implementation.code)
        )
    else:
        assert "declared_in" not in hit_item(implementation)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_symbol_the_question_names_keeps_its_place(store: VectorStore) -> None:
    hits = await SearchService(store, None).search(LOCAL, "VerifyService.sendCode", limit=5)

    assert hits[0].qualified_name == "demo.svc.VerifyService.sendCode"


@pytest.mark.asyncio(loop_scope="module")
async def test_the_store_tells_the_implementing_type_when_no_candidate_does(store: VectorStore) -> None:
    search = SearchService(store, None)
    wanted = ["demo.svc.VerifyService.sendCode", "demo.svc.impl.VerifyServiceImpl.sendCode"]
    hits = await search.lookup(LOCAL, Filters(), any_of("qualified_name", wanted))  # no type chunk among them
    reader = search._reader

    shown = await fold.folded_hits(reader, LOCAL, Filters(), hits, set(), limit=10)

    assert [h.qualified_name for h in shown] == ["demo.svc.impl.VerifyServiceImpl.sendCode"]
    assert shown[0].declaration is not None
    assert shown[0].declaration.qualified_name == "demo.svc.VerifyService.sendCode"
    assert await fold.folded_hits(reader, LOCAL, Filters(), hits, {hits[0].id}, limit=10) == hits  # exact: kept
