"""Long methods become `method_part` chunks cut at statement boundaries, tiling the method exactly."""

from __future__ import annotations

from itertools import pairwise

import pytest
from tree_sitter import Node

from pipeline.model import Chunk, ChunkerConfig, SymbolType
from pipeline.splitting import estimate_tokens
from pipeline.syntax import parse
from tests.support.java import chunk_java

LEDGER = """package demo;

public class Ledger {

    /**
     * Posts every entry and returns the balance.
     */
    public long post(java.util.List<Long> entries) {
        long balance = 0;
        int rejected = 0;
        for (Long entry : entries) {
            if (entry == null) {
                rejected++;
                continue;
            }
            balance += entry;
            audit("posted", entry,
                  balance);
        }
        if (rejected > 0) {
            audit("rejected", rejected,
                  balance);
        }
        String summary = "balance=" + balance
                + ", rejected=" + rejected
                + ", entries=" + entries.size();
        System.out.println(summary);
        try {
            flush(balance);
        } catch (RuntimeException ex) {
            audit("flush failed", 0,
                  balance);
        }
        return balance;
    }

    private void audit(String what, long amount, long balance) {
    }

    private void flush(long balance) {
    }
}
"""
POST_LINES = (5, 35)  # from the Javadoc to the closing brace
LINES = LEDGER.split("\n")
STATEMENT_KINDS = {
    "local_variable_declaration",
    "expression_statement",
    "if_statement",
    "for_statement",
    "enhanced_for_statement",
    "while_statement",
    "do_statement",
    "try_statement",
    "catch_clause",
    "return_statement",
    "continue_statement",
    "break_statement",
    "throw_statement",
    "block",
}


def _statement_first_lines(source: str) -> set[int]:
    lines: set[int] = set()
    stack: list[Node] = [parse(source.encode()).root_node]
    while stack:
        node = stack.pop()
        if node.type in STATEMENT_KINDS:
            lines.add(node.start_point.row + 1)
        stack.extend(node.named_children)
    return lines


def _largest_statement_tokens(source: str) -> int:
    """Tokens of the biggest statement that has no statement inside it (one the splitter cannot open)."""
    biggest = 0
    stack: list[Node] = [parse(source.encode()).root_node]
    while stack:
        node = stack.pop()
        if node.type in STATEMENT_KINDS - {"block"} and not any(d.type in STATEMENT_KINDS for d in node.named_children):
            biggest = max(biggest, estimate_tokens("\n".join(LINES[node.start_point.row : node.end_point.row + 1])))
        stack.extend(node.named_children)
    return biggest


def _parts(budget: int, source: str = LEDGER, name: str = "demo.Ledger.post") -> list[Chunk]:
    result = chunk_java(source, "src/main/java/demo/Ledger.java", config=ChunkerConfig(max_chunk_tokens=budget))
    return sorted((c for c in result.chunks if c.qualified_name == name), key=lambda c: c.part_index)


BUDGETS = [30, 40, 60, 80]


def test_budgets_are_above_every_statement_and_below_the_method() -> None:
    whole = estimate_tokens("\n".join(LINES[POST_LINES[0] - 1 : POST_LINES[1]]))
    assert _largest_statement_tokens(LEDGER) <= min(BUDGETS) and max(BUDGETS) < whole


@pytest.mark.parametrize("budget", BUDGETS)
def test_method_over_budget_is_split_into_parts(budget: int) -> None:
    parts = _parts(budget)
    assert len(parts) > 1
    assert {(c.symbol_type, c.part_count) for c in parts} == {(SymbolType.METHOD_PART, len(parts))}
    assert [c.part_index for c in parts] == list(range(len(parts)))


@pytest.mark.parametrize("budget", BUDGETS)
def test_parts_tile_the_method_without_gap_or_overlap(budget: int) -> None:
    spans = [(c.line_start, c.line_end) for c in _parts(budget)]
    assert spans[0][0] == POST_LINES[0] and spans[-1][1] == POST_LINES[1]
    assert all(start <= end for start, end in spans)
    assert all(prev_end + 1 == next_start for (_, prev_end), (next_start, _) in pairwise(spans))


@pytest.mark.parametrize("budget", BUDGETS)
def test_cuts_fall_on_statement_starts_or_closing_braces(budget: int) -> None:
    starts = _statement_first_lines(LEDGER)
    cuts = [c.line_start for c in _parts(budget)[1:]]
    bad = [line for line in cuts if line not in starts and not LINES[line - 1].strip().startswith("}")]
    assert bad == []


@pytest.mark.parametrize("budget", BUDGETS)
def test_every_part_but_the_signature_fits_the_budget(budget: int) -> None:
    for part in _parts(budget)[1:]:
        assert estimate_tokens(part.code) <= budget, (part.line_start, part.line_end)


@pytest.mark.parametrize("budget", BUDGETS)
def test_part_code_is_its_lines(budget: int) -> None:
    for part in _parts(budget):
        assert part.code == "\n".join(LINES[part.line_start - 1 : part.line_end])


def test_part_headers_name_the_part_and_carry_the_signature() -> None:
    parts = _parts(40)
    for part in parts:
        header = part.text.partition("\n---\n")[0].splitlines()
        assert f"kind: method_part (part {part.part_index + 1} of {len(parts)})" in header
        assert "signature: post(java.util.List<Long> entries): long" in header


def test_parts_share_name_signature_and_summary() -> None:
    parts = _parts(40)
    assert {(c.qualified_name, c.signature, c.javadoc_summary) for c in parts} == {
        ("demo.Ledger.post", "post(java.util.List<Long> entries): long", "Posts every entry and returns the balance.")
    }


def test_part_ids_are_distinct() -> None:
    parts = _parts(40)
    assert len({c.id for c in parts}) == len(parts)


@pytest.mark.parametrize("budget", BUDGETS)
def test_each_part_lists_only_the_calls_on_its_lines(budget: int) -> None:
    for part in _parts(budget):
        assert ("Ledger.flush" in part.calls) == (part.line_start <= 29 <= part.line_end)  # flush(balance);


def test_method_within_budget_stays_whole() -> None:
    chunks = _parts(10_000)
    assert [(c.symbol_type, c.part_index, c.part_count) for c in chunks] == [(SymbolType.METHOD, 0, 1)]


def test_other_methods_of_the_file_are_not_split() -> None:
    result = chunk_java(LEDGER, config=ChunkerConfig(max_chunk_tokens=30))
    audit = [c for c in result.chunks if c.name == "audit"]
    assert [(c.symbol_type, c.part_count) for c in audit] == [(SymbolType.METHOD, 1)]


LONG_STATEMENT = (
    'package demo;\n\nclass Text {\n    String all() {\n        return "start"\n'
    + "".join(f'            + "line number {i:03d} of a very long concatenation"\n' for i in range(60))
    + '            + "end";\n    }\n}\n'
)


def test_single_statement_over_budget_is_cut_between_lines() -> None:
    parts = _parts(40, LONG_STATEMENT, "demo.Text.all")
    spans = [(c.line_start, c.line_end) for c in parts]
    assert len(parts) > 2
    assert spans[0][0] == 4 and spans[-1][1] == 67
    assert all(prev_end + 1 == next_start for (_, prev_end), (next_start, _) in pairwise(spans))


def test_a_part_knows_locals_declared_in_an_earlier_part() -> None:
    source = (
        "package demo;\n\nimport java.util.List;\n\nclass Names {\n    void fill() {\n"
        "        List<String> names = new java.util.ArrayList<>();\n"
        + "".join(f'        names.add("name number {i:03d} in the list");\n' for i in range(40))
        + "    }\n}\n"
    )
    parts = _parts(60, source, "demo.Names.fill")
    assert len(parts) > 1
    assert all(p.calls == ("List.add",) for p in parts[1:])


@pytest.mark.parametrize(
    ("code", "tokens"),
    [("", 0), ("x", 1), ("abc", 1), ("abcd", 2), ("x" * 9, 3), ("x" * 10, 4), (" a b\tc\r\nd ", 2)],
)
def test_estimate_tokens_is_non_blank_characters_over_three_rounded_up(code: str, tokens: int) -> None:
    assert estimate_tokens(code) == tokens
