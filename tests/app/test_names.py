"""Names instead of strings (issue 11): each state, outcome, job id, type kind, event and trigger is spelled once.

The enums of `app.core.states` are the source; PostgreSQL's CHECK constraints and the `Literal`s of the
published API must list exactly their values, and nothing outside `app.jobs.queue` builds a job id or
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

from app.core.events import GitLabEvent, Ignored
from app.core.states import (
    ACCEPTED,
    BackfillOutcome,
    BackfillStatus,
    DeliveryOutcome,
    LibraryStatus,
    ProjectStatus,
    RebuildProjectStatus,
    RebuildStatus,
    RequestSource,
    RequestState,
    RunStatus,
    SyncTrigger,
)
from app.jobs import queue
from app.rest import schemas
from hooks.events import parse_event
from pipeline.buildfiles import DependencyKind
from pipeline.model import SYMBOL_TYPES, TYPE_SYMBOLS, SymbolType
from pipeline.outline import CALLABLE_NODE_KINDS, TYPE_NODE_KINDS
from testkit import payloads

ROOT = Path(__file__).resolve().parents[2]
CHECKED: dict[tuple[str, str], type[enum.StrEnum]] = {
    ("projects", "status"): ProjectStatus,
    ("index_jobs", "status"): RunStatus,
    ("backfills", "status"): BackfillStatus,
    ("backfill_projects", "outcome"): BackfillOutcome,
    ("rebuilds", "status"): RebuildStatus,
    ("rebuild_projects", "status"): RebuildProjectStatus,
    ("libraries", "status"): LibraryStatus,
    ("project_dependencies", "kind"): DependencyKind,
    ("index_requests", "source"): RequestSource,
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
        (schemas.RebuildStatusValue, RebuildStatus),
        (schemas.RebuildProjectStatusValue, RebuildProjectStatus),
        (schemas.RequestStateValue, RequestState),
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
    assert queue.backfill_job_id(5, "t") == "backfill:5:t"
    assert queue.backfill_step_job_id(5, "t", 2) == "backfill:5:t:step:2"
    assert queue.rebuild_job_id(5, "t") == "rebuild:5:t"
    assert queue.rebuild_project_job_id(5, "t", 7) == "rebuild:5:t:7"
    assert queue.rebuild_finish_job_id(5, "t") == "rebuild:5:t:finish"


JOB_PREFIXES = ("sync:", "purge:", "move:", "refresh:", "replay:", "backfill:", "rebuild:")
SOURCES = sorted(p for package in ("entry", "app", "hooks", "mcp_server") for p in (ROOT / package).glob("**/*.py"))


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
    if path == ROOT / "app" / "jobs" / "queue.py":
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
    for package in ("entry", "app", "hooks", "mcp_server", "pipeline", "bench")
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


# --- GitLab event names and sync triggers ----------------------------------------------------------------------------


def test_each_gitlab_event_parses_to_its_event_named_as_gitlab_sends_it() -> None:
    parsed = {
        GitLabEvent.PUSH: parse_event(payloads.system_hook_push()),
        GitLabEvent.REPOSITORY_UPDATE: parse_event(payloads.system_hook_repository_update()),
        GitLabEvent.PROJECT_DESTROY: parse_event(payloads.system_hook_project_destroy()),
        GitLabEvent.PROJECT_RENAME: parse_event(payloads.system_hook_project_rename()),
        GitLabEvent.PROJECT_TRANSFER: parse_event(payloads.system_hook_project_transfer()),
        GitLabEvent.PROJECT_UPDATE: parse_event(payloads.system_hook_project_update()),
    }
    assert list(parsed) == list(GitLabEvent)
    for name, event in parsed.items():
        assert not isinstance(event, Ignored), name
        assert event.event is name
        assert json.dumps({"event": event.event}) == json.dumps({"event": name.value})  # stored and logged as before
    assert [m.value for m in GitLabEvent] == [
        "push", "repository_update", "project_destroy", "project_rename", "project_transfer", "project_update",
    ]  # fmt: skip


def test_the_sync_triggers_keep_their_stored_strings() -> None:
    assert [m.value for m in SyncTrigger] == [
        "continue", "backfill", "reconcile", "scope", "default_branch_changed", "index_job", "refresh", "local",
    ]  # fmt: skip
    assert not {m.value for m in SyncTrigger} & {m.value for m in GitLabEvent}  # a stored trigger names one cause
    assert f"{SyncTrigger.SCOPE}" == "scope"


EVENT_NAMES = frozenset(m.value for m in GitLabEvent)
TRIGGER_CALLS = frozenset({"enqueue_sync", "push_syncs", "sync_once", "start_run", "sync_project", "_request"})
NAME_SOURCES = sorted(
    p
    for package in ("entry", "app", "hooks", "mcp_server")
    for p in (ROOT / package).glob("**/*.py")
    if p not in (ROOT / "app" / "core" / "events.py", ROOT / "app" / "core" / "states.py")
)


def bare_names(tree: ast.AST) -> list[str]:
    """String constants that are a GitLab event name, and string arguments to a call that takes a trigger."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in EVENT_NAMES and id(node) not in docstrings
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in TRIGGER_CALLS:
                found += [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return found


@pytest.mark.parametrize("path", NAME_SOURCES, ids=[str(p.relative_to(ROOT)) for p in NAME_SOURCES])
def test_event_names_and_triggers_are_spelled_once(path: Path) -> None:
    assert bare_names(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_name_scanner_sees_bare_names() -> None:
    sample = ast.parse(
        '"""push and project_destroy in a docstring are prose."""\nif name == "push": pass\n'
        'await enqueue_sync(q, 1, 2, "reconcile")\nawait self._request(deps, info, "scope")\nx = {"scope": 1}'
    )
    assert bare_names(sample) == ["push", "reconcile", "scope"]


def test_queued_jobs_carry_trigger_names_as_plain_strings() -> None:
    # arq pickles job arguments: an enum in a job ties it to this version's classes, so a worker of
    # another version could not read it during a rolling upgrade.
    from app.core.events import GitLabEvent
    from app.core.states import SyncTrigger, trigger_of

    for member in (*GitLabEvent, *SyncTrigger):
        assert type(str(member)) is str and trigger_of(str(member)) is member
    assert trigger_of("a_trigger_of_a_later_version") is None


async def test_an_enqueued_sync_job_holds_a_plain_string(clean_redis: str) -> None:
    from arq import create_pool
    from arq.connections import RedisSettings

    from app.core.events import GitLabEvent
    from app.core.states import SyncTrigger
    from app.jobs.queue import enqueue_sync, push_syncs

    queue = await create_pool(RedisSettings.from_dsn(clean_redis))
    try:
        assert await enqueue_sync(queue, 7, 1, SyncTrigger.RECONCILE)
        await push_syncs(queue, [(8, 1, GitLabEvent.PUSH)])
        args = sorted(job.args for job in await queue.queued_jobs())
        assert args == [(7, "reconcile"), (8, "push")]
        assert all(type(trigger) is str for _, trigger in args)
    finally:
        await queue.aclose()
