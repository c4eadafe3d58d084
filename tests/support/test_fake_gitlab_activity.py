"""The fake GitLab's `last_activity_at` (with GitLab's hourly throttle), its listing filters, and pruning."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import gitlab
import pytest

from testkit.fake_gitlab import FakeGitLab

TOKEN = "glpat-test"
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gl(tmp_path: Path, clock: Clock) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path, token=TOKEN, clock=clock) as fake:
        yield fake
        assert fake.server_errors == []


@pytest.fixture
def client(gl: FakeGitLab) -> Iterator[gitlab.Gitlab]:
    with gitlab.Gitlab(gl.url, private_token=TOKEN) as api:
        yield api


def as_dict(value: object) -> dict[str, Any]:
    assert isinstance(value, dict)
    return value


def activity(client: gitlab.Gitlab, project_id: int) -> str:
    return str(client.projects.get(project_id).attributes["last_activity_at"])


def test_a_push_moves_last_activity_at_only_when_it_is_an_hour_old(
    client: gitlab.Gitlab, gl: FakeGitLab, clock: Clock
) -> None:
    project = gl.create_project("acme/shop")
    assert activity(client, project.id) == "2026-12-01T08:00:00.000Z"  # creation
    clock.now = T0 + timedelta(minutes=59)
    project.commit({"A.java": "class A {}"}, "a")
    assert activity(client, project.id) == "2026-12-01T08:00:00.000Z"  # throttled
    clock.now = T0 + timedelta(hours=1)
    project.commit({"B.java": "class B {}"}, "b")
    assert activity(client, project.id) == "2026-12-01T09:00:00.000Z"  # `last_activity_at <= 1.hour.ago`


def test_listing_filters_on_last_activity_strictly(client: gitlab.Gitlab, gl: FakeGitLab, clock: Clock) -> None:
    old = gl.create_project("acme/old")
    clock.now = T0 + timedelta(hours=2)
    new = gl.create_project("acme/new")

    def ids(**filters: Any) -> list[int]:
        return [p.id for p in client.projects.list(order_by="id", sort="asc", get_all=True, **filters)]

    assert ids(last_activity_after="2026-12-01T08:00:00Z") == [new.id]  # strictly after
    assert ids(last_activity_after="2026-12-01T07:59:59Z") == [old.id, new.id]
    assert ids(last_activity_before="2026-12-01T10:00:00Z") == [old.id]
    assert ids(last_activity_after="2026-12-01T07:00:00") == [old.id, new.id]  # no zone: UTC
    with pytest.raises(gitlab.GitlabListError) as err:
        ids(last_activity_after="yesterday")
    assert err.value.response_code == 400
    ordered = client.projects.list(order_by="last_activity_at", sort="desc", get_all=True)
    assert [p.id for p in ordered] == [new.id, old.id]


def test_a_pruned_force_push_makes_the_old_commit_404(client: gitlab.Gitlab, gl: FakeGitLab) -> None:
    project = gl.create_project("acme/shop")
    base = project.commit({"A.java": "class A {}"}, "a")
    gone = project.commit({"B.java": "class B {}"}, "b")
    project.force_reset("main", base)
    api = client.projects.get(project.id, lazy=True)
    assert as_dict(api.repository_compare(gone, base, straight=True))["compare_same_ref"] is False  # not pruned
    project.prune()
    with pytest.raises(gitlab.GitlabGetError) as err:
        api.repository_compare(gone, base, straight=True)
    assert (err.value.response_code, err.value.error_message) == (404, "404 Ref Not Found")


def test_an_amend_keeps_the_tree_and_replaces_the_commit(client: gitlab.Gitlab, gl: FakeGitLab) -> None:
    project = gl.create_project("acme/shop")
    project.commit({"A.java": "class A {}"}, "a")
    before = project.head()
    after = project.amend("a, said better")
    result = as_dict(client.projects.get(project.id, lazy=True).repository_compare(before, after, straight=True))
    assert after != before and result["diffs"] == []
    assert [c["id"] for c in result["commits"]] == [after] and before not in result["commits"][0]["parent_ids"]


def test_updated_after_lists_projects_whose_row_changed_and_needs_updated_at_order(
    client: gitlab.Gitlab, gl: FakeGitLab, clock: Clock
) -> None:
    kept, changed, moved = (gl.create_project(f"acme/p{i}") for i in range(3))
    clock.now = T0 + timedelta(minutes=10)
    gl.set_project_attributes(changed.id, visibility="internal")
    gl.set_project_attributes(kept.id, repository_access_level="private")  # `project_features`: not the row
    gl.rename_project(moved.id, "renamed")
    after = (T0 + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")

    listed = client.projects.list(updated_after=after, order_by="updated_at", sort="asc", get_all=True)

    assert [p.id for p in listed] == [changed.id, moved.id]
    assert listed[0].attributes["updated_at"] == "2026-12-01T08:10:00.000Z"
    with pytest.raises(gitlab.exceptions.GitlabListError) as refused:
        client.projects.list(updated_after=after, order_by="id", get_all=True)
    assert refused.value.response_code == 400
