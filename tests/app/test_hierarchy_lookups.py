"""Exact lookups through the type hierarchy and learned stereotypes (issue 12), through both embedded
engines: calls resolve across files, beans of stereotypes declared elsewhere have their injections,
composed mappings map their handlers. The Java is `test_exact_lookups.py`'s.
"""

from __future__ import annotations

import pytest

from app.auth.access import LOCAL, Access
from app.search.frontier import frontier_keys
from app.search.hierarchy import Declaration, Hierarchy
from app.search.scoping import Filters
from app.search.service import SearchService
from app.store.filters import Condition
from tests.app import test_exact_lookups
from tests.app.test_exact_lookups import names

# The module's fixtures: its own index, as the tests next door read it.
search = test_exact_lookups.search
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_callers_of_a_base_method_include_calls_on_subtypes_that_inherit_it(search: SearchService) -> None:
    # Leaf inherits GrandChild's override, not Base's: `leaf.isActive()` is not a call of Base.isActive.
    # Outside extends `Holder.Inner` (a nested type, named with its outer one), which extends Base.
    expected = [
        "demo.model.Holder.onInner",
        "demo.model.Holder.onOutside",
        "demo.use.Checker.onBase",
        "demo.use.Checker.onChild",
    ]
    assert names(await search.callers(LOCAL, "demo.model.Base.isActive")) == expected
    assert names(await search.callers(LOCAL, "Base.isActive")) == expected


async def test_callers_of_an_inherited_method_named_by_the_subtype(search: SearchService) -> None:
    # Child declares no isActive: its callers are those of the method it inherits, as seen from Child.
    assert names(await search.callers(LOCAL, "Child.isActive")) == [
        "demo.use.Checker.onBase",
        "demo.use.Checker.onChild",
    ]


async def test_callers_of_a_library_method_reach_its_direct_subtypes(search: SearchService) -> None:
    # `orders.save(o)` is recorded as OrderRepository.save; OrderRepository extends JpaRepository directly.
    assert names(await search.callers(LOCAL, "save")) == []  # no indexed declaration, no owner
    library = "org.springframework.data.jpa.repository.JpaRepository.save"
    assert names(await search.callers(LOCAL, library)) == ["demo.use.PlaceOrder.store"]
    # Named as an agent writes it: the library type is not indexed, its subtypes' imports resolve it.
    assert names(await search.callers(LOCAL, "JpaRepository.save")) == ["demo.use.PlaceOrder.store"]
    assert names(await search.callers(LOCAL, "CrudRepository.save")) == []  # nothing indexed extends it


async def test_callers_of_an_override_include_calls_through_its_supertypes(search: SearchService) -> None:
    assert names(await search.callers(LOCAL, "GrandChild.isActive")) == [
        "demo.use.Checker.onBase",
        "demo.use.Checker.onChild",
        "demo.use.Checker.onLeaf",
    ]


async def test_callees_resolve_to_the_nearest_declaring_supertype(search: SearchService) -> None:
    [(call, targets)] = await search.callees(LOCAL, "Checker.onChild")
    assert (call, names(targets)) == ("Child.isActive", ["demo.model.Base.isActive"])
    [(call, targets)] = await search.callees(LOCAL, "Checker.onLeaf")
    assert (call, names(targets)) == ("Leaf.isActive", ["demo.model.GrandChild.isActive"])


async def test_interface_and_implementation_link_both_ways(search: SearchService) -> None:
    # A call through the interface may run the implementation: it is among the implementation's callers.
    assert names(await search.callers(LOCAL, "CardGateway.charge")) == [
        "demo.pay.Checkout.pay",
        "demo.pay.Checkout.payByCard",
    ]
    # A call on the implementation runs its own override, not the interface's declaration.
    assert names(await search.callers(LOCAL, "PaymentGateway.charge")) == ["demo.pay.Checkout.pay"]
    [(call, targets)] = await search.callees(LOCAL, "Checkout.pay")
    assert (call, names(targets)) == ("PaymentGateway.charge", ["demo.pay.PaymentGateway.charge"])


async def test_stereotypes_are_learned_transitively_across_files_and_repositories(search: SearchService) -> None:
    assert await search.bean_stereotypes(LOCAL) == {"DomainService", "UseCase", "Adapter"}


async def test_meta_annotated_stereotype_from_another_file_injects(search: SearchService) -> None:
    assert names(await search.injectors(LOCAL, "OrderRepository")) == [
        "demo.use.PlaceOrder",
        "demo.use.PlaceOrder.PlaceOrder",
    ]
    assert await search.dependencies(LOCAL, "PlaceOrder") == ["OrderRepository"]


async def test_stereotype_declared_in_another_repository_injects(search: SearchService) -> None:
    # PlainHolder has the same Lombok constructor but no bean annotation: it injects nothing.
    assert names(await search.injectors(LOCAL, "demo.client.StockClient")) == ["demo.use.StockAdapter"]
    assert await search.dependencies(LOCAL, "StockAdapter") == ["StockClient"]
    assert await search.dependencies(LOCAL, "PlainHolder") == []


async def test_a_stereotype_the_caller_may_not_read_is_not_learned(search: SearchService) -> None:
    app_only = Access(subject="u", project_ids=frozenset({1}))
    assert await search.bean_stereotypes(app_only) == {"DomainService", "UseCase"}
    assert names(await search.injectors(app_only, "StockClient")) == []


async def test_dgs_component_is_a_bean(search: SearchService) -> None:
    hits = await search.injectors(LOCAL, "OrderMapper")
    assert names(hits) == ["demo.graphql.OrderFetcher", "demo.graphql.OrderFetcher.OrderFetcher"]
    assert {h.chunk.stereotype for h in hits} == {"component"}
    assert await search.dependencies(LOCAL, "OrderFetcher") == ["OrderMapper"]


async def test_a_composed_mapping_declared_in_another_repository_maps_its_handlers(search: SearchService) -> None:
    [login] = await search.endpoint(LOCAL, "/auth/login", "POST")
    assert (login.qualified_name, login.chunk.http_method, login.chunk.http_path) == (
        "demo.web.AuthController.login", ("POST",), ("/auth/login",)
    )  # fmt: skip
    assert await search.endpoint(LOCAL, "/auth/login", "GET") == []
    # Learned transitively (`@SignupPost` carries `@PublicPost`), with the class prefix and no path of its own.
    assert names(await search.endpoint(LOCAL, "/auth", "post")) == ["demo.web.AuthController.signup"]
    assert await search.endpoint(LOCAL, "/auth/audit") == []  # `@Log` is no mapping


async def test_a_composed_mapping_the_caller_may_not_read_maps_nothing(search: SearchService) -> None:
    app_only = Access(subject="u", project_ids=frozenset({1}))
    assert await search.endpoint(app_only, "/auth/login") == []
    assert names(await search.endpoint(LOCAL, "/auth/login")) == ["demo.web.AuthController.login"]


async def test_search_finds_a_composed_mappings_handler_by_its_route(search: SearchService) -> None:
    [first, *_] = await search.search(LOCAL, "POST /auth/login")
    assert (first.qualified_name, first.chunk.http_path) == ("demo.web.AuthController.login", ("/auth/login",))


async def test_the_hierarchy_walk_costs_one_store_call_per_level_not_per_type(search: SearchService) -> None:
    calls = 0

    async def lookup(condition: Condition) -> list[Declaration]:
        nonlocal calls
        calls += 1
        return [Declaration.of(h.chunk) for h in await search._lookup(LOCAL, Filters(), condition)]

    walked = await Hierarchy(lookup).walk({"demo.model.Child"})
    parents, children = walked.parents, walked.children
    assert [d.qualified_name for d in walked.roots] == ["demo.model.Child"]
    assert parents == {"demo.model.Child": ("demo.model.Base",), "demo.model.Base": ()}
    assert children == {"demo.model.Child": {"demo.model.GrandChild"}, "demo.model.GrandChild": {"demo.model.Leaf"}}
    assert calls == 3  # Child and its subtypes; Base and GrandChild's; Leaf's (none)


def counted(search: SearchService) -> tuple[Hierarchy, list[Condition]]:
    """The caller's hierarchy, noting each store call it makes."""
    asked: list[Condition] = []

    async def lookup(condition: Condition) -> list[Declaration]:
        asked.append(condition)
        return [Declaration.of(h.chunk) for h in await search._lookup(LOCAL, Filters(), condition)]

    return Hierarchy(lookup), asked


async def test_a_walk_keeping_some_roots_is_the_walk_of_those_alone(search: SearchService) -> None:
    hierarchy, asked = counted(search)
    roots = {"demo.model.Child", "demo.pay.CardGateway", "demo.model.NoSuchType"}
    kept = await hierarchy.walk(roots, keep=lambda d: d.qualified_name == "demo.model.Child")
    calls = len(asked)
    asked.clear()
    alone = await hierarchy.walk({"demo.model.Child"})
    assert (kept.parents, kept.children, kept.roots) == (alone.parents, alone.children, alone.roots)
    assert calls == len(asked) == 3


async def test_a_frontier_reads_its_owners_declarations_in_the_walk_s_first_level(search: SearchService) -> None:
    declared = ["demo.model.Base.isActive", "demo.model.GrandChild.isActive", "demo.pay.CardGateway.charge"]
    names = [*declared, "Leaf.isActive"]  # the last: not package-qualified, `call_keys` answers it
    hierarchy, asked = counted(search)
    owners = {name.rpartition(".")[0] for name in declared}
    await hierarchy.walk(owners)
    walk = len(asked)
    asked.clear()

    keys = await frontier_keys(hierarchy, names, lambda n: search.call_keys(LOCAL, n))

    assert keys == [await search.call_keys(LOCAL, name) for name in names]
    # The walk and the redeclaration lookup: the owners' declarations were a call of their own before.
    assert len(asked) == walk + 1
