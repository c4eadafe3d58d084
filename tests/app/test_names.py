"""Names instead of strings (issue 11): each state, outcome, job id and type kind is spelled once.

The enums of `app.states` are the source; PostgreSQL's CHECK constraints and the `Literal`s of the
published API must list exactly their values, and nothing outside `app.queue` builds a job id or
outside `pipeline.model` lists the type kinds.
"""

from __future__ import annotations

import ast
import enum
import json
import re
from pathlib import Path
from typing import get_args

import asyncpg
import pytest

from app import queue, schemas
from app.states import ACCEPTED, BackfillOutcome, BackfillStatus, DeliveryOutcome, ProjectStatus, RunStatus
from pipeline.model import SYMBOL_TYPES, TYPE_SYMBOLS, SymbolType
from pipeline.outline import CALLABLE_NODE_KINDS, TYPE_NODE_KINDS

ROOT = Path(__file__).resolve().parents[2]
CHECKED: dict[tuple[str, str], type[enum.StrEnum]] = {
    ("projects", "status"): ProjectStatus,
    ("index_jobs", "status"): RunStatus,
    ("backfills", "status"): BackfillStatus,
    ("backfill_projects", "outcome"): BackfillOutcome,
}
CHECK_VALUES = """
    SELECT pg_get_constraintdef(c.oid)
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_attribute a ON a.attrelid = t.oid
    WHERE c.contype = 'c' AND t.relname = $1 AND a.attname = $2 AND a.attnum = ANY (c.conkey)
"""


async def test_the_check_constraints_list_exactly_the_enum_values(pg_dsn: str) -> None:
    conn = await asyncpg.connect(pg_dsn)
    try:
        for (table, column), names in CHECKED.items():
            definitions = [row[0] for row in await conn.fetch(CHECK_VALUES, table, column)]
            assert len(definitions) == 1, (table, column, definitions)
            assert re.findall(r"'([^']*)'::text", definitions[0]) == [m.value for m in names], (table, column)
    finally:
        await conn.close()


@pytest.mark.parametrize(
    ("literal", "names"),
    [
        (schemas.BackfillStatusValue, BackfillStatus),
        (schemas.BackfillOutcomeValue, BackfillOutcome),
        (schemas.DeliveryOutcomeValue, DeliveryOutcome),
    ],
)
def test_the_api_literals_list_exactly_the_enum_values(literal: object, names: type[enum.StrEnum]) -> None:
    assert get_args(literal) == tuple(m.value for m in names)


def test_an_enum_member_is_its_stored_string() -> None:
    # Stored, logged and JSON values stay the strings they were before the enums.
    assert json.dumps({"status": ProjectStatus.OUT_OF_SCOPE}) == '{"status": "out_of_scope"}'
    assert f"{RunStatus.FAILED} {DeliveryOutcome.ENQUEUED}" == "FAILED enqueued"
    assert [ProjectStatus.OK] == ["ok"]  # equal as str: a stored "ok" compares equal to the member
    assert sorted(ACCEPTED) == ["deferred", "enqueued"]


def test_job_ids_keep_their_shapes() -> None:
    assert queue.sync_job_id(7, 3) == "sync:7:3"
    assert queue.sync_job_id(7, 3, "n") == "sync:7:3:n"
    assert queue.purge_job_id(7, "k") == "purge:7:k"
    assert queue.move_job_id(7, "k") == "move:7:k"
    assert queue.refresh_job_id(7, "k") == "refresh:7:k"
    assert queue.replay_job_id("k") == "replay:k"
    assert queue.backfill_job_id(5) == "backfill:5"


JOB_PREFIXES = ("sync:", "purge:", "move:", "refresh:", "replay:", "backfill:")
SOURCES = sorted(p for package in ("app", "hooks", "mcp_server") for p in (ROOT / package).glob("**/*.py"))


def job_id_literals(tree: ast.AST) -> list[str]:
    """The f-strings that start like a job id (`f"purge:{...}"`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and str(first.value).startswith(JOB_PREFIXES):
                found.append(str(first.value))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_only_the_queue_module_builds_job_ids(path: Path) -> None:
    found = job_id_literals(ast.parse(path.read_text(encoding="utf-8")))
    if path == ROOT / "app" / "queue.py":
        assert len(found) >= len(JOB_PREFIXES)
    else:
        assert found == []


KIND_SETS = (TYPE_SYMBOLS, frozenset(TYPE_NODE_KINDS), CALLABLE_NODE_KINDS)


def kind_collections(tree: ast.AST) -> list[list[str]]:
    """Literals (tuple, list, set, dict keys) naming two or more type kinds, type node kinds or callable node kinds."""
    found = []
    for node in ast.walk(tree):
        elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) or elements is None:
            continue
        strings = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(strings) == len(elements) and any(len(set(strings) & kinds) >= 2 for kinds in KIND_SETS):
            found.append(strings)
    return found


KIND_SOURCES = sorted(
    p
    for package in ("app", "hooks", "mcp_server", "pipeline", "bench")
    for p in (ROOT / package).glob("**/*.py")
    if p not in (ROOT / "pipeline" / "model.py", ROOT / "pipeline" / "outline.py")
)


@pytest.mark.parametrize("path", KIND_SOURCES, ids=[str(p.relative_to(ROOT)) for p in KIND_SOURCES])
def test_the_type_kinds_are_listed_once(path: Path) -> None:
    assert kind_collections(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_scanners_see_what_they_look_for() -> None:
    sample = ast.parse(
        'x = ("class", "interface", "record")\ny = f"purge:{pid}:{key}"\nz = ("class", "a")\n'
        'k = {"enum_declaration": 1, "record_declaration": 2}\nc = {"method_declaration", "constructor_declaration"}'
    )
    assert kind_collections(sample) == [
        ["class", "interface", "record"],
        ["enum_declaration", "record_declaration"],
        ["method_declaration", "constructor_declaration"],
    ]
    assert job_id_literals(sample) == ["purge:"]
    assert {SymbolType.ANNOTATION, SymbolType.CLASS} <= TYPE_SYMBOLS < SYMBOL_TYPES
