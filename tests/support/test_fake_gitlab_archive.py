"""The fake GitLab's archive and group endpoints behave as GitLab's (`lib/api/repositories.rb`, `lib/api/groups.rb`)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from testkit.fake_gitlab import FakeGitLab

TOKEN = "glpat-test"
HEADERS = {"PRIVATE-TOKEN": TOKEN}


@pytest.fixture
def gl(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path, token=TOKEN) as fake:
        yield fake
        assert fake.server_errors == []


def names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())


def test_the_archive_at_a_sha_is_a_tar_gz_under_gitlabs_prefix(gl: FakeGitLab) -> None:
    project = gl.create_project("acme/shop")
    sha = project.commit({"src/A.java": "class A {}", "README.md": "hi"}, "init")
    for route in ("archive", "archive.tar.gz"):
        response = requests.get(f"{gl.url}/api/v4/projects/{project.id}/repository/{route}", params={"sha": sha},
                                headers=HEADERS, timeout=10)  # fmt: skip
        assert response.status_code == 200
        assert names(response.content) == [f"shop-{sha}-{sha}/README.md", f"shop-{sha}-{sha}/src/A.java"]
        assert f'filename="shop-{sha}-{sha}.tar.gz"' in response.headers["Content-Disposition"]


def test_an_unknown_sha_or_an_empty_repository_is_404_file(gl: FakeGitLab) -> None:
    project = gl.create_project("acme/shop")
    url = f"{gl.url}/api/v4/projects/{project.id}/repository/archive.tar.gz"
    empty = requests.get(url, headers=HEADERS, timeout=10)
    assert (empty.status_code, empty.json()) == (404, {"message": "404 File Not Found"})
    project.commit({"A.java": "class A {}"}, "init")
    unknown = requests.get(url, params={"sha": "f" * 40}, headers=HEADERS, timeout=10)
    assert (unknown.status_code, unknown.json()) == (404, {"message": "404 File Not Found"})


def test_the_archive_rate_limit_answers_429_per_project(gl: FakeGitLab) -> None:
    first, second = gl.create_project("acme/a"), gl.create_project("acme/b")
    for project in (first, second):
        project.commit({"A.java": "class A {}"}, "init")
    gl.archive_limit_per_min = 1
    url = f"{gl.url}/api/v4/projects/{{}}/repository/archive.tar.gz"
    assert requests.get(url.format(first.id), headers=HEADERS, timeout=10).status_code == 200
    limited = requests.get(url.format(first.id), headers=HEADERS, timeout=10)
    assert limited.status_code == 429
    assert limited.json() == {"error": "This archive has been requested too many times. Try again later."}
    assert requests.get(url.format(second.id), headers=HEADERS, timeout=10).status_code == 200


def test_group_projects_list_subgroups_only_when_asked(gl: FakeGitLab) -> None:
    for path in ("acme/top", "acme/platform/mid", "acme/platform/core/deep", "tools/cli", "alice/mine"):
        gl.create_project(path)
    gl.set_namespace_kind("alice", "user")

    def listed(group: str, **params: str) -> list[str]:
        response = requests.get(f"{gl.url}/api/v4/groups/{group}/projects", params=params, headers=HEADERS, timeout=10)
        assert response.status_code == 200, response.text
        return sorted(p["path_with_namespace"] for p in response.json())

    assert listed("acme%2Fplatform") == ["acme/platform/mid"]
    assert listed("acme%2Fplatform", include_subgroups="true") == ["acme/platform/core/deep", "acme/platform/mid"]
    group = gl.group("acme")
    assert group is not None and len(listed(str(group.id), include_subgroups="true")) == 3
    for missing in ("nope", "alice"):  # a personal namespace is not a group
        response = requests.get(f"{gl.url}/api/v4/groups/{missing}/projects", headers=HEADERS, timeout=10)
        assert (response.status_code, response.json()) == (404, {"message": "404 Group Not Found"})
