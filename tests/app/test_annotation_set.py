"""A question naming an annotation of members asks for a set of members: the file signals leave it alone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.search import boosts
from app.search.question import query_terms
from app.search.ranking import names_member_annotation, rerank
from pipeline.model import Chunk, SymbolType
from tests.app.test_ranking import chunk


def member(name: str, file: str, *annotations: str, symbol_type: SymbolType = SymbolType.METHOD) -> Chunk:
    return replace(
        chunk(name, annotations=annotations, symbol_type=symbol_type), file_path=f"src/main/java/acme/{file}.java"
    )


@pytest.mark.parametrize(
    ("question", "carriers", "expected"),
    [
        ("transactional owner methods", [member("OwnerService.find", "OwnerService", "Transactional")], True),
        ("@Transactional owner methods", [member("OwnerService.find", "OwnerService", "Transactional")], True),
        ("scheduled jobs", [member("Jobs.purge", "Jobs", "Scheduled")], True),
        # only a type carries it: the question names types, which the file signals serve
        (
            "transactional owner services",
            [member("OwnerService", "OwnerService", "Transactional", symbol_type=SymbolType.CLASS)],
            False,
        ),
        ("which class is transactional", [member("OwnerService.find", "OwnerService", "Transactional")], False),
        ("owner lookup methods", [member("OwnerService.find", "OwnerService", "Transactional")], False),
        # JAX-RS's verb is the HTTP method of a route question, not a set
        ("GET /api/owners/{id}", [member("OwnerResource.show", "OwnerResource", "GET")], False),
    ],
)
def test_a_question_names_an_annotation_of_members(question: str, carriers: list[Chunk], expected: bool) -> None:
    assert names_member_annotation(query_terms(question), carriers) is expected


# A busy file of transactional report methods, and the one owner method the question asks for, scored best.
POOL = [
    member("OwnerService.find", "OwnerService", "Transactional"),
    member("ReportService.visits", "ReportService", "Transactional"),
    member("ReportService.pets", "ReportService", "Transactional"),
    member("ReportService.owners", "ReportService", "Transactional"),
    member("ReportService.types", "ReportService", "Transactional"),
]
SCORES = [1.0, 0.9, 0.8, 0.8, 0.8]


@pytest.fixture(params=[True, False], ids=["on", "off"])
def rule(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if not request.param:
        monkeypatch.setattr(boosts, "DISABLED", boosts.DISABLED | {"annotation_set"})
    return bool(request.param)


def test_the_busiest_file_leads_only_with_the_rule_off(rule: bool) -> None:
    order = rerank(query_terms("transactional owner methods"), POOL, scores=SCORES)

    first = POOL[order[0]].name
    assert first == ("find" if rule else "visits")
