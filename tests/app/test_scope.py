"""The indexing scope's decision (pure): every rule, its reason, and the receiver's screen."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from app.core.events import GitLabEvent
from app.core.settings import ScopeSettings, Settings
from app.gitlab.client import ProjectInfo, project_info
from app.sync.scope import IN_SCOPE, OutOfScope, decide, decide_path, screen, under
from hooks.events import Ignored, ProjectDestroyed, SyncRequested


def info(path: str = "acme/shop", **facts: Any) -> ProjectInfo:
    return ProjectInfo(id=1, path_with_namespace=path, default_branch="main", empty=False, **facts)


def reason(decision: object) -> str:
    assert isinstance(decision, OutOfScope), decision
    return decision.reason


@pytest.mark.parametrize(
    ("path", "prefix", "inside"),
    [
        ("acme/shop", "acme", True),
        ("acme/platform/shop", "acme", True),
        ("acme/platform/shop", "acme/platform", True),
        ("acme/shop", "acme/shop", True),  # a single project can be named
        ("ACME/Shop", "acme", True),  # GitLab routes are case-insensitive
        ("acme-labs/shop", "acme", False),  # whole segments only
        ("other/acme/shop", "acme", False),
    ],
)
def test_prefixes_match_whole_path_segments(path: str, prefix: str, inside: bool) -> None:
    assert under(path, prefix) is inside


def test_the_defaults_index_group_projects_only() -> None:
    scope = ScopeSettings()
    assert decide(info(namespace_kind="group", topics=("java",)), scope) == IN_SCOPE
    assert "personal" in reason(decide(info("alice/toy", namespace_kind="user"), scope))
    assert "fork of project 7" in reason(decide(info(forked_from_id=7), scope))
    assert "archived" in reason(decide(info(archived=True), scope))
    assert "javakb-ignore" in reason(decide(info(topics=("Java", "JavaKB-Ignore")), scope))  # topics: any case


def test_each_exclusion_can_be_turned_off() -> None:
    scope = ScopeSettings(personal=True, forks=True, archived=True, ignore_topic="")
    facts = info("alice/toy", namespace_kind="user", forked_from_id=7, archived=True, topics=("javakb-ignore",))
    assert decide(facts, scope) == IN_SCOPE


def test_deny_beats_allow_and_allow_limits_everything_else() -> None:
    scope = ScopeSettings(allow=("acme",), deny=("acme/secret",))
    assert decide_path("acme/shop", scope) == IN_SCOPE
    assert reason(decide_path("acme/secret/vault", scope)) == "under the denied prefix 'acme/secret'"
    assert reason(decide_path("other/shop", scope)) == "under none of the allowed prefixes"


def test_a_project_marked_for_deletion_is_out_whatever_the_settings() -> None:
    scope = ScopeSettings(personal=True, forks=True, archived=True, ignore_topic=None)
    assert reason(decide(info(marked_for_deletion_on="2026-12-08"), scope)) == "marked for deletion on 2026-12-08"


def test_the_path_rules_come_before_the_api_facts() -> None:
    scope = ScopeSettings(deny=("acme",))
    assert "denied" in reason(decide(info(archived=True), scope))


@pytest.mark.parametrize("bad", [[""], ["/"], ["acme//shop"], [" "]])
def test_an_empty_or_malformed_prefix_is_refused(bad: list[str]) -> None:
    with pytest.raises(ValidationError, match="namespace path"):
        ScopeSettings(deny=tuple(bad))


def test_prefixes_are_normalized_and_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_SCOPE__ALLOW", '["/Acme/Platform/", "tools"]')
    monkeypatch.setenv("JAVAKB_SCOPE__FORKS", "true")
    monkeypatch.setenv("JAVAKB_SCOPE__IGNORE_TOPIC", "no-ai")
    scope = Settings().scope
    assert (scope.allow, scope.forks, scope.ignore_topic) == (("acme/platform", "tools"), True, "no-ai")


def test_the_receiver_ignores_a_push_out_of_scope_and_passes_lifecycle_events() -> None:
    scope = ScopeSettings(deny=("mike",))
    push = SyncRequested(
        event=GitLabEvent.PUSH,
        project_id=15,
        repo_path="mike/diaspora",
        default_branch="main",
        ref="refs/heads/main",
        after="a",
    )
    assert screen(push, scope) == Ignored(
        event=GitLabEvent.PUSH, reason="out of scope: under the denied prefix 'mike'", project_id=15
    )
    assert screen(push, ScopeSettings()) is push
    destroy = ProjectDestroyed(event=GitLabEvent.PROJECT_DESTROY, project_id=15, repo_path="mike/diaspora")
    assert screen(destroy, scope) is destroy  # a purge is never filtered away


def test_project_info_reads_the_api_entity() -> None:
    entity = {
        "id": 5,
        "path_with_namespace": "alice/toy",
        "default_branch": "main",
        "empty_repo": False,
        "namespace": {"id": 3, "kind": "user", "full_path": "alice"},
        "archived": True,
        "forked_from_project": {"id": 2, "path_with_namespace": "acme/toy"},
        "topics": ["java"],
        "visibility": "internal",
        "repository_access_level": "private",
        "marked_for_deletion_on": None,
    }
    assert project_info(entity) == ProjectInfo(
        id=5, path_with_namespace="alice/toy", default_branch="main", empty=False, namespace_kind="user",
        namespace_path="alice", archived=True, forked_from_id=2, topics=("java",), visibility="internal",
        repository_access="private", marked_for_deletion_on=None,
    )  # fmt: skip
    bare = project_info({"id": 6, "path_with_namespace": "acme/x"})
    assert (bare.namespace_kind, bare.visibility, bare.forked_from_id, bare.topics) == (None, None, None, ())
