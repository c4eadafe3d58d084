from __future__ import annotations

import pytest

from app.core.errors import PayloadError
from app.core.events import GitLabEvent
from hooks.events import Ignored, ProjectDestroyed, ProjectMoved, ProjectUpdated, SyncRequested, parse_event
from testkit import payloads


def test_system_hook_push_to_default_branch_requests_a_sync() -> None:
    event = parse_event(payloads.system_hook_push())
    assert event == SyncRequested(
        event=GitLabEvent.PUSH,
        project_id=15,
        repo_path="mike/diaspora",
        default_branch="master",
        ref="refs/heads/master",
        after="da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
    )


def test_project_webhook_push_has_the_same_meaning() -> None:
    event = parse_event(payloads.project_webhook_push())
    assert isinstance(event, SyncRequested)
    assert event.project_id == 15


def test_push_to_another_branch_is_ignored() -> None:
    body = payloads.system_hook_push()
    body["ref"] = "refs/heads/feature/x"
    event = parse_event(body)
    assert isinstance(event, Ignored)
    assert "not the default branch" in event.reason


def test_first_push_with_null_default_branch_counts_as_default() -> None:
    body = payloads.push_branch_create()
    body["project"]["default_branch"] = None
    event = parse_event(body)
    assert isinstance(event, SyncRequested)
    assert event.default_branch is None


def test_branch_delete_is_ignored() -> None:
    event = parse_event(payloads.push_branch_delete())
    assert isinstance(event, Ignored)


def test_tag_push_is_ignored() -> None:
    event = parse_event(payloads.system_hook_tag_push())
    assert isinstance(event, Ignored)
    assert event.event == "tag_push"


def test_repository_update_on_default_branch_requests_a_sync() -> None:
    event = parse_event(payloads.system_hook_repository_update())
    assert isinstance(event, SyncRequested)
    assert event.event == "repository_update"
    assert event.after == "4045ea7a3df38697b3730a20fb73c8bed8a3e69e"


def test_repository_update_without_default_branch_change_is_ignored() -> None:
    body = payloads.system_hook_repository_update()
    body["changes"] = [{"before": "a" * 40, "after": "b" * 40, "ref": "refs/tags/v1"}]
    assert isinstance(parse_event(body), Ignored)


def test_project_lifecycle_events() -> None:
    assert parse_event(payloads.system_hook_project_destroy()) == ProjectDestroyed(
        event=GitLabEvent.PROJECT_DESTROY, project_id=73, repo_path="jsmith/underscore"
    )
    assert parse_event(payloads.system_hook_project_rename()) == ProjectMoved(
        event=GitLabEvent.PROJECT_RENAME, project_id=73, old_path="jsmith/overscore", new_path="jsmith/underscore"
    )
    assert parse_event(payloads.system_hook_project_transfer()) == ProjectMoved(
        event=GitLabEvent.PROJECT_TRANSFER, project_id=73, old_path="jsmith/overscore", new_path="scores/underscore"
    )
    assert parse_event(payloads.system_hook_project_update()) == ProjectUpdated(
        event=GitLabEvent.PROJECT_UPDATE, project_id=74, repo_path="jsmith/storecloud"
    )


def test_unknown_event_is_ignored() -> None:
    assert isinstance(parse_event({"event_name": "user_create"}), Ignored)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ([], "not a JSON object"),
        ({}, "no event_name"),
        ({"event_name": "push"}, "project is missing"),
        ({"event_name": "push", "project": {}, "project_id": "15"}, "project_id"),
        ({"event_name": "push", "project": {}, "project_id": 15, "ref": "refs/heads/main"}, "after"),
        ({"event_name": "repository_update", "project": {}, "project_id": 1, "changes": "x"}, "changes"),
        ({"event_name": "project_rename", "project_id": 1, "path_with_namespace": "a/b"}, "old_path_with_namespace"),
    ],
)
def test_malformed_payloads_raise_a_short_reason(body: object, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        parse_event(body)
