"""Near-twins told apart by the module the question names (`app.search.own_words`)."""

from __future__ import annotations

import dataclasses

import pytest

from app.search import boosts, own_words
from app.search.own_words import identity, lifted, module_folders, spelled_keys, weights
from app.search.question import query_terms
from pipeline.model import Chunk, SymbolType


def member(qualified: str, path: str, kind: SymbolType = SymbolType.METHOD) -> Chunk:
    owner, _, name = qualified.rpartition(".")
    return Chunk(
        id=qualified,
        repo_path="g/r",
        gitlab_project_id=None,
        commit_sha=None,
        branch=None,
        file_path=path,
        package=owner.rpartition(".")[0],
        qualified_name=qualified,
        symbol_type=kind,
        name=name,
        signature=name,
        enclosing_type=owner if kind is not SymbolType.CLASS else None,
        line_start=1,
        line_end=2,
        content_hash=qualified,
        code="",
        text="",
    )


ADMIN = member("com.acme.service.CartService.clear", "shop-admin/src/main/java/com/acme/service/CartService.java")
PORTAL = member("com.acme.service.CartService.clear", "shop-portal/src/main/java/com/acme/service/CartService.java")


def test_module_folders_are_the_folders_before_the_source_root() -> None:
    assert module_folders("mall-portal/src/main/java/com/macro/mall/Oms.java") == ("mall-portal",)
    assert module_folders("services/account-service/src/main/java/A.java") == ("services", "account-service")
    assert module_folders("src/main/java/com/acme/A.java") == ()
    assert module_folders("A.java") == ()  # no source root: no module


def test_identity_is_the_module() -> None:
    words = identity(member("com.acme.client.AuthServiceClient.createUser", "account-service/src/main/java/x/A.java"))

    assert words == {"account", "service"}


def test_with_own_names_identity_is_the_member_its_type_and_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(own_words, "OWN_NAMES", True)
    words = identity(member("com.acme.client.AuthServiceClient.createUser", "account-service/src/main/java/x/A.java"))
    type_words = identity(member("com.acme.RecipientRepository", "src/main/java/com/acme/R.java", SymbolType.CLASS))

    assert {"create", "user", "auth", "service", "client", "account"} <= words
    assert "acme" not in words  # the package is not a name the chunk is declared under
    assert type_words == {"recipient", "repository", "recipientrepository"}


def test_keywords_spell_by_word_prefix_stem_and_verb_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(own_words, "OWN_NAMES", True)
    words = identity(member("com.acme.UmsAdminCacheService.delResourceListByRoleIds", "a/src/X.java"))
    keys = ["admin", "dropped", "role", "entry", "synchronised"]

    assert spelled_keys(keys, words) == {"admin", "dropped", "role"}  # "dropped" ~ `del`, a verb of its class
    assert spelled_keys(["synchronised"], frozenset({"sync"})) == {"synchronised"}  # a prefix


def test_a_verb_of_the_class_spells_only_a_whole_word() -> None:
    assert spelled_keys(["dropped"], frozenset({"delivery"})) == frozenset()  # `del` is not a prefix match


def test_a_word_every_candidate_spells_weighs_nothing_a_rare_one_most() -> None:
    weight = weights(["service", "admin"], [frozenset({"service", "admin"}), frozenset({"service"})])

    assert weight["admin"] > weight["service"]
    assert weights(["x"], [frozenset({"x"})] * 3)["x"] == pytest.approx(0.0)


def test_the_twin_whose_module_the_question_names_is_lifted() -> None:
    terms = query_terms("how does an admin empty the cart")

    admin_first = lifted(terms, [PORTAL, ADMIN], [1.0, 1.0])

    assert admin_first[1] > admin_first[0]


def test_the_lift_is_bounded_by_the_weight_times_the_best_score() -> None:
    terms = query_terms("how does an admin clear the cart")
    other = member("com.acme.Report.print", "report/src/main/java/R.java")

    scores = lifted(terms, [other, ADMIN], [1.0, 0.2])

    assert scores[0] == pytest.approx(1.0)  # spells nothing
    assert 0.2 < scores[1] <= 0.2 + own_words.OWN_WEIGHT * 1.0


def test_no_lift_for_a_question_of_identifiers_or_when_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lifted(query_terms("CartService.clear"), [PORTAL, ADMIN], [1.0, 0.5]) == [1.0, 0.5]
    monkeypatch.setattr(boosts, "DISABLED", {"own_words"})
    assert lifted(query_terms("how does an admin empty the cart"), [PORTAL, ADMIN], [1.0, 0.5]) == [1.0, 0.5]


def test_scaffolding_in_its_singular_form_is_no_keyword() -> None:
    does = dataclasses.replace(ADMIN, file_path="doe/src/main/java/X.java")  # "does" reads as the word `doe`

    assert lifted(query_terms("how does it work"), [ADMIN, does], [1.0, 0.5]) == [1.0, 0.5]


def test_only_the_pool_every_search_asks_for_is_lifted() -> None:
    terms = query_terms("how does an admin empty the cart")
    chunks = [PORTAL] * boosts.DEPTH + [ADMIN]

    out = lifted(terms, chunks, [1.0] * len(chunks))

    assert out[-1] == 1.0  # past `boosts.DEPTH`: a longer pool would otherwise put it ahead of the top
