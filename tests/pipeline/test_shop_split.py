"""The long `ReportService.buildMonthlyReport` of the `shop` fixture, split into `method_part` chunks."""

from __future__ import annotations

from itertools import pairwise

from pipeline.model import ChunkerConfig, SymbolType
from tests.support.shop import CORE, Shop

REPORT = f"{CORE}.service.ReportService.buildMonthlyReport"


def test_long_method_is_split_into_three_parts(shop: Shop) -> None:
    parts = shop.parts(REPORT)
    assert [(c.symbol_type, c.part_index, c.part_count) for c in parts] == [
        (SymbolType.METHOD_PART, 0, 3),
        (SymbolType.METHOD_PART, 1, 3),
        (SymbolType.METHOD_PART, 2, 3),
    ]


def test_parts_tile_the_method_from_its_javadoc_to_its_closing_brace(shop: Shop) -> None:
    spans = [(c.line_start, c.line_end) for c in shop.parts(REPORT)]
    assert spans[0][0] == 93 and spans[-1][1] == 426
    assert all(prev[1] + 1 == nxt[0] for prev, nxt in pairwise(spans))


def test_parts_fit_the_token_budget(shop: Shop) -> None:
    budget = ChunkerConfig().max_chunk_tokens
    for part in shop.parts(REPORT):
        non_blank = sum(1 for ch in part.code if not ch.isspace())
        assert (non_blank + 2) // 3 <= budget, part.part_index


def test_parts_share_the_method_metadata(shop: Shop) -> None:
    parts = shop.parts(REPORT)
    assert {
        (c.name, c.signature, c.parameter_types, c.annotations, c.stereotype, c.javadoc_summary) for c in parts
    } == {
        (
            "buildMonthlyReport",
            "buildMonthlyReport(YearMonth month, Options options): MonthlyReport",
            ("YearMonth", "Options"),
            ("@Transactional(readOnly = true)",),
            "service",
            "Builds the monthly activity and revenue report for the given month.",
        )
    }


def test_each_part_header_names_its_part_and_the_signature(shop: Shop) -> None:
    for part in shop.parts(REPORT):
        header = part.text.partition("\n---\n")[0].splitlines()
        assert f"kind: method_part (service) (part {part.part_index + 1} of 3)" in header
        assert "signature: buildMonthlyReport(YearMonth month, Options options): MonthlyReport" in header


def test_part_ids_differ(shop: Shop) -> None:
    assert len({c.id for c in shop.parts(REPORT)}) == 3


def test_the_split_method_has_no_whole_chunk(shop: Shop) -> None:
    assert {c.symbol_type for c in shop.chunks if c.qualified_name == REPORT} == {SymbolType.METHOD_PART}


def test_parts_together_make_the_documented_calls(shop: Shop) -> None:
    calls = {call for part in shop.parts(REPORT) for call in part.calls}
    assert {
        "Objects.requireNonNull",
        "YearMonth.now",
        "NumberFormat.getCurrencyInstance",
        "DateTimeFormatter.ofPattern",
        "LocalDate.now",
        "VisitRepository.findByDateBetween",
        "Logger.error",
        "Logger.debug",
        "Logger.info",
        "Character.isDigit",
        "Integer.parseInt",
        "String.format",
        "OwnerRepository.count",
    } <= calls


def test_each_part_lists_the_calls_on_its_own_lines(shop: Shop) -> None:
    first, _, last = shop.parts(REPORT)
    assert ("Logger.error" in first.calls, "Logger.error" in last.calls) == (True, False)  # line 143
    assert ("Logger.info" in first.calls, "Logger.info" in last.calls) == (False, True)  # line 424


def test_part_knows_locals_declared_in_an_earlier_part(shop: Shop) -> None:
    # `money` is declared on line 127 (first part) and used on line 402 (last part).
    assert "NumberFormat.format" in shop.parts(REPORT)[2].calls


def test_string_literal_receiver_is_a_string(shop: Shop) -> None:
    assert "String.repeat" in shop.parts(REPORT)[2].calls  # "=".repeat(40)


def test_repeated_fluent_link_collapses(shop: Shop) -> None:
    calls = shop.parts(REPORT)[2].calls
    assert "StringBuilder.append().append" in calls
    assert not [c for c in calls if ".append().append()." in c or c.endswith("append().append().append")]


def test_static_call_on_a_nested_type_keeps_its_outer_type(shop: Shop) -> None:
    part = shop.parts(REPORT)[2]
    assert {"Visit.Status.values", "Map.Entry.comparingByValue", "Map.Entry.comparingByKey"} <= set(part.calls)


def test_static_call_on_a_nested_type_is_qualified(shop: Shop) -> None:
    part = shop.parts(REPORT)[2]
    expected = {
        f"{CORE}.domain.Visit.Status.values",
        "java.util.Map.Entry.comparingByValue",
        "java.util.Map.Entry.comparingByKey",
    }
    assert expected <= set(part.calls_fq)
