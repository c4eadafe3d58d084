"""The rerank's bounds: exact matches join the fusion, word boosts move candidates only so far."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.search.question import query_terms
from app.search.ranking import (
    KEPT,
    MAX_PLACES,
    PROTECTED,
    Evidence,
    below_members,
    callees_first,
    fuse,
    members_first,
    places,
    promote,
    rerank,
    signals,
)
from pipeline.model import Chunk, SymbolType


def chunk(
    name: str,
    *,
    symbol_type: SymbolType = SymbolType.METHOD,
    stereotype: str | None = None,
    annotations: tuple[str, ...] = (),
    enclosing: str | None = "com.acme.Thing",
    http_method: tuple[str, ...] = (),
    http_path: tuple[str, ...] = (),
    calls_fq: tuple[str, ...] = (),
) -> Chunk:
    return Chunk(
        id=name,
        repo_path="g/r",
        gitlab_project_id=None,
        commit_sha=None,
        branch=None,
        file_path=f"src/{name}.java",
        package="com.acme",
        qualified_name=f"com.acme.{name}",
        symbol_type=symbol_type,
        name=name.rsplit(".", 1)[-1],
        signature=name,
        enclosing_type=enclosing,
        annotation_names=annotations,
        stereotype=stereotype,
        http_method=http_method,
        http_path=http_path,
        calls_fq=calls_fq,
        line_start=1,
        line_end=2,
        content_hash=name,
        code="",
        text="",
    )


@given(st.lists(st.integers(min_value=0, max_value=MAX_PLACES), min_size=1, max_size=60))
def test_a_fused_top_3_candidate_stays_in_the_top_5_whatever_the_boosts(boosts: list[int]) -> None:
    order = list(range(len(boosts)))

    final = promote(order, boosts)

    assert sorted(final) == order
    for item in order[:PROTECTED]:
        assert final.index(item) < KEPT


@given(st.lists(st.integers(min_value=0, max_value=MAX_PLACES), min_size=1, max_size=60))
def test_a_boosted_candidate_passes_at_most_its_places_of_unboosted_ones(boosts: list[int]) -> None:
    order = list(range(len(boosts)))

    final = promote(order, boosts)

    for item in order:
        passed = [o for o in order[:item] if boosts[o] == 0 and final.index(o) > final.index(item)]
        assert len(passed) <= boosts[item]
    unboosted = [o for o in final if boosts[o] == 0]
    assert unboosted == sorted(unboosted)  # no boost reorders the candidates it does not touch


def test_a_boost_lifts_a_deep_candidate_into_view() -> None:
    boosts = [0] * 20
    boosts[8] = places(1)

    assert promote(list(range(20)), boosts).index(8) == 4  # the 9th reaches the 5th place


def test_the_question_word_service_does_not_lift_every_service_over_strong_matches() -> None:
    terms = query_terms("which service sends the invoice mail")
    strong = [chunk(f"Mailer.send{i}") for i in range(3)]
    services = [chunk(f"Svc{i}.run", stereotype="service") for i in range(30)]

    order = rerank(terms, [*strong, *services])

    assert {order.index(i) for i in range(3)} <= set(range(KEPT))
    assert signals(terms, services[0]) == 1


def test_more_signals_lift_further() -> None:
    terms = query_terms("which service methods are audited")
    one = chunk("OwnerService.normalize", stereotype="service")
    two = chunk("OwnerService.delete", stereotype="service", annotations=("Audited", "Transactional"))

    assert (signals(terms, one), signals(terms, two)) == (1, 2)
    assert places(2) > places(1)


def test_member_words_do_not_boost_types() -> None:
    terms = query_terms("which methods are transactional")
    type_chunk = chunk("OrderService", symbol_type=SymbolType.CLASS, annotations=("Transactional",))
    method = chunk("OrderService.place", annotations=("Transactional",))

    assert (signals(terms, type_chunk), signals(terms, method)) == (0, 1)


def test_labels_match_word_by_word_in_camel_case() -> None:
    kafka = chunk("Consumer.onMessage", annotations=("KafkaListener",))

    assert signals(query_terms("kafka listener methods"), kafka) == 1
    assert signals(query_terms("kafka listeners"), kafka) == 1
    assert signals(query_terms("event listener methods"), kafka) == 0  # every word of the label, or none


def test_an_http_verb_boosts_the_handlers_of_that_verb() -> None:
    terms = query_terms("which endpoints handle DELETE requests")

    assert signals(terms, chunk("C.remove", http_method=("DELETE",))) == 1
    assert signals(terms, chunk("C.show", http_method=("GET",))) == 0


def test_an_exact_match_outside_the_fused_list_comes_first() -> None:
    terms = query_terms("GET /owners/{id}")
    fused = [chunk(f"Other{i}.m") for i in range(10)]
    handler = chunk("OwnerController.show", http_method=("GET",))

    order = rerank(terms, [*fused, handler], Evidence(routes=[10]), fused=10)

    assert order[0] == 10


def test_an_exact_match_in_the_fused_list_is_not_passed_by_word_boosts() -> None:
    terms = query_terms("OwnerService")
    pool = [
        chunk("OwnerService", symbol_type=SymbolType.CLASS, enclosing=None),
        *(chunk(f"OwnerService.m{i}", enclosing="com.acme.OwnerService") for i in range(5)),
    ]

    assert rerank(terms, pool, Evidence(symbols=[0]))[0] == 0


def test_many_exact_matches_decay_like_any_ranked_list() -> None:
    # Twenty overloads named alike do not push the fused first candidate out of the top five.
    order = fuse(41, [(1.0, range(21)), (2.0, range(21, 41))])

    assert order.index(0) < KEPT
    assert order[0] == 21


def test_an_unboosted_pool_keeps_the_fused_order() -> None:
    terms = query_terms("where is an invoice total computed")
    pool = [chunk(f"A{i}.m") for i in range(12)]

    assert rerank(terms, pool) == list(range(12))


def test_a_type_follows_its_own_member_that_ranks_below_it() -> None:
    cart = chunk("CartService", symbol_type=SymbolType.CLASS, enclosing=None)
    other = chunk("Other.m", enclosing="com.acme.Other")
    clear = chunk("CartService.clear", enclosing="com.acme.CartService")
    chunks = [cart, other, clear]

    assert rerank(query_terms("how is the cart emptied"), chunks) == [1, 2, 0]
    assert rerank(query_terms("which class empties the cart"), chunks) == [0, 1, 2]  # a type was asked for


def test_a_type_with_no_member_below_it_or_matched_exactly_keeps_its_place() -> None:
    outer = chunk("Outer", symbol_type=SymbolType.CLASS, enclosing=None)
    inner = chunk("Outer.Inner", symbol_type=SymbolType.CLASS, enclosing="com.acme.Outer")
    member = chunk("Outer.Inner.m", enclosing="com.acme.Outer.Inner")
    lone = chunk("Lone", symbol_type=SymbolType.CLASS, enclosing=None)
    chunks = [outer, inner, lone, member]

    # Nested: Inner goes after its member, Outer after Inner (its first member), Lone stays.
    assert members_first([0, 1, 2, 3], chunks, exact=set()) == [2, 3, 1, 0]
    assert members_first([0, 1, 2, 3], chunks, exact={0}) == [0, 2, 3, 1]


def test_a_type_after_its_own_member_moves_three_places_further_down() -> None:
    member = chunk("Cart.add", enclosing="com.acme.Cart")
    cart = chunk("Cart", symbol_type=SymbolType.CLASS, enclosing=None)
    others = [chunk(f"Other{i}.m", enclosing=f"com.acme.Other{i}") for i in range(4)]
    lone = chunk("Lone", symbol_type=SymbolType.CLASS, enclosing=None)
    chunks = [member, cart, *others, lone]  # indexes: 0 member, 1 cart, 2-5 others, 6 lone

    assert below_members([0, 1, 2, 3, 4, 5, 6], chunks, exact=set()) == [0, 2, 3, 4, 1, 5, 6]
    assert below_members([0, 6, 1, 2], chunks, exact=set()) == [0, 6, 2, 1]  # at most to the end
    assert below_members([1, 0, 2, 3, 4], chunks, exact=set()) == [1, 0, 2, 3, 4]  # its member is below it
    assert below_members([0, 1, 2, 3, 4], chunks, exact={1}) == [0, 1, 2, 3, 4]  # matched exactly
    # In a question about behaviour, through rerank: the type first moves after its member, then on.
    assert rerank(query_terms("how is an item added to the cart"), [cart, member, *others]) == [1, 2, 3, 4, 0, 5]
    assert rerank(query_terms("which class holds the cart"), [cart, member, *others]) == [0, 1, 2, 3, 4, 5]


def test_a_handler_follows_the_method_it_delegates_to_in_a_question_about_behaviour() -> None:
    handler = chunk(
        "LogController.deleteErrors",
        enclosing="com.acme.LogController",
        http_path=("/logs/errors",),
        calls_fq=("com.acme.LogService.deleteByError",),
    )
    other = chunk("Other.m", enclosing="com.acme.Other")
    service = chunk("LogService.deleteByError", enclosing="com.acme.LogService")
    impl = chunk("LogServiceImpl.deleteByError", enclosing="com.acme.LogServiceImpl")
    chunks = [handler, other, impl, service]

    assert rerank(query_terms("how are all error logs deleted"), chunks) == [2, 0, 1, 3]
    assert rerank(query_terms("which endpoint deletes error logs"), chunks) == [0, 1, 2, 3]  # the web was asked
    assert callees_first([0, 1, 3, 2], chunks, exact=set()) == [3, 0, 1, 2]  # the exact callee, ranked first
    assert callees_first([0, 1, 3], chunks, exact={3}) == [0, 1, 3]


def test_a_handler_stays_before_its_own_helper() -> None:
    # The handler delegates to collaborators, not to itself: a private helper of its own class is a part of it.
    handler = chunk(
        "AccountResource.partialUpdate",
        enclosing="com.acme.AccountResource",
        http_path=("/accounts/{id}",),
        calls_fq=("com.acme.AccountResource.updateIfPresent", "com.acme.AccountService.save"),
    )
    helper = chunk("AccountResource.updateIfPresent", enclosing="com.acme.AccountResource")
    service = chunk("AccountService.save", enclosing="com.acme.AccountService")
    assert callees_first([0, 1], [handler, helper], exact=set()) == [0, 1]
    assert callees_first([0, 1, 2], [handler, helper, service], exact=set()) == [2, 0, 1]


def test_an_unresolved_call_names_no_callee() -> None:
    handler = chunk("C.h", enclosing="com.acme.C", http_path=("/x",), calls_fq=("deleteByError",))
    anywhere = chunk("Any.deleteByError", enclosing="com.acme.Any")
    assert callees_first([0, 1], [handler, anywhere], exact=set()) == [0, 1]
