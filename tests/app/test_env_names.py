"""Misspelt `JAVAKB_*` variables are named with the setting they probably meant (`app.core.env_names`)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from app.core.env_names import KNOWN, OTHER_VARIABLES, unknown_variables, unknown_warnings
from app.core.settings import Settings
from app.core.settings_doc import rows
from entry.doctor import Verdict, check_environment

ROOT = Path(__file__).resolve().parents[2]
READ_BY_CODE = ("scripts/*", "docker-compose.yml", "Dockerfile", "helm/**/*.yaml", "helm/**/*.tpl")
VARIABLE = re.compile(r"\bJAVAKB_[A-Z0-9_]*[A-Z0-9]\b")  # a stem like `JAVAKB_OAUTH__` is no variable


def test_the_misspellings_of_the_issue_are_named_with_the_setting_meant() -> None:
    environ = {"JAVAKB_GITLAB_URL": "https://gitlab.example.com", "JAVAKB_GITLAB__TOKN": "t", "JAVAKB_PORT": "1"}

    assert unknown_variables(environ) == [
        ("JAVAKB_GITLAB_URL", "JAVAKB_GITLAB__URL"),
        ("JAVAKB_GITLAB__TOKN", "JAVAKB_GITLAB__TOKEN"),
    ]
    assert unknown_warnings({"JAVAKB_ZZZZZZ": "1"}) == [
        "JAVAKB_ZZZZZZ is not a setting and is ignored (every setting: docs/configuration.md)"
    ]


def test_pydantic_settings_really_ignores_what_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_GITLAB_URL", "https://misspelt.example.com")
    monkeypatch.setenv("JAVAKB_WORKER__MAX_JOBS", "3")
    monkeypatch.setenv("javakb_scope__forks", "true")  # matched case-insensitively, as pydantic-settings does

    settings = Settings()

    assert (settings.gitlab.url, settings.worker.max_jobs, settings.scope.forks) == (None, 3, True)
    assert [name for name, _ in unknown_variables({"JAVAKB_WORKER__MAX_JOBS": "3", "javakb_scope__forks": "1"})] == []


def test_the_names_are_derived_from_the_model_nested_models_included() -> None:
    documented = {row.variable for _, section in rows() for row in section}
    assert documented <= KNOWN
    assert {"JAVAKB_NEXT_EMBEDDING", "JAVAKB_NEXT_EMBEDDING__MODEL", "JAVAKB_GITLAB"} <= KNOWN
    assert not KNOWN & OTHER_VARIABLES


def test_every_javakb_variable_the_code_reads_is_a_setting_or_declared() -> None:
    # Test modules are left out: they spell names wrong on purpose. Their fixtures and tools are read.
    files = {p for pattern in READ_BY_CODE for p in ROOT.glob(pattern) if p.is_file()}
    files |= {p for p in ROOT.glob("**/*.py") if not p.name.startswith("test_")}
    named = {
        name
        for path in files
        if not {".venv", "node_modules", ".git"} & set(path.relative_to(ROOT).parts)
        for name in VARIABLE.findall(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert "JAVAKB_TEST_REDIS" in named and "JAVAKB_POSTGRES__DSN" in named  # the scan sees both kinds
    assert sorted(named - KNOWN - OTHER_VARIABLES) == []


def test_doctor_warns_of_a_misspelt_variable_with_its_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_GITLAB__TOKN", "t")

    [finding] = asyncio.run(check_environment(Settings(), None))  # type: ignore[arg-type]

    assert finding.verdict is Verdict.WARN
    assert "JAVAKB_GITLAB__TOKN" in finding.detail and finding.fix == "rename it to JAVAKB_GITLAB__TOKEN"
