"""The fake GitLab, driven through python-gitlab the way the sync job drives the real one."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gitlab
import gitlab.utils
import pytest
import requests

from testkit.fake_gitlab import FakeGitLab, FakeProject

TOKEN = "glpat-test"
JAVA_A = "src/main/java/A.java"


@pytest.fixture
def gl(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path, token=TOKEN) as fake:
        yield fake
        assert fake.server_errors == []


@pytest.fixture
def client(gl: FakeGitLab) -> Iterator[gitlab.Gitlab]:
    with gitlab.Gitlab(gl.url, private_token=TOKEN, retry_transient_errors=True) as api:
        yield api


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """What python-gitlab's retry loop would have slept, without sleeping (its clock is a process edge)."""
    waits: list[float] = []
    monkeypatch.setattr(gitlab.utils, "time", SimpleNamespace(sleep=waits.append, time=time.time))
    return waits


@pytest.fixture
def shop(gl: FakeGitLab) -> FakeProject:
    return gl.create_project("acme/shop")


def as_dict(value: object) -> dict[str, Any]:
    assert isinstance(value, dict)
    return value


def git(project: FakeProject, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=project.repo_dir, capture_output=True, text=True, check=True
    ).stdout.strip()


# -- projects -------------------------------------------------------------------------------------


def test_project_by_id_and_by_path(client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject) -> None:
    shop.commit({JAVA_A: "class A {}\n"}, "add A")

    by_id = client.projects.get(shop.id)
    by_path = client.projects.get("acme/shop")

    assert by_id.get_id() == by_path.get_id() == shop.id == 1
    assert by_id.path_with_namespace == "acme/shop"
    assert by_id.default_branch == "main"
    assert by_id.empty_repo is False
    assert by_id.archived is False
    assert by_id.web_url == f"{gl.url}/acme/shop"
    assert by_id.namespace["full_path"] == "acme"


def test_empty_repository_reports_configured_default_branch(client: gitlab.Gitlab, gl: FakeGitLab) -> None:
    # GitLab exposes `default_branch_or_main`, so an empty repo says "main" (or its configured name), never null.
    project = gl.create_project("acme/empty", default_branch="trunk")

    got = client.projects.get(project.id)

    assert (got.empty_repo, got.default_branch) == (True, "trunk")


def test_unknown_project_is_404(client: gitlab.Gitlab) -> None:
    with pytest.raises(gitlab.GitlabGetError) as err:
        client.projects.get("nobody/nothing")

    assert (err.value.response_code, err.value.error_message) == (404, "404 Project Not Found")


def test_rename_and_transfer_change_the_path(client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject) -> None:
    gl.rename_project(shop.id, "store")
    assert client.projects.get("acme/store").get_id() == shop.id
    with pytest.raises(gitlab.GitlabGetError):
        client.projects.get("acme/shop")  # GitLab's API does not follow redirect routes

    gl.transfer_project(shop.id, "retail/eu")

    moved = client.projects.get("retail/eu/store")
    assert (shop.path_with_namespace, moved.path_with_namespace) == ("retail/eu/store", "retail/eu/store")
    assert moved.namespace["full_path"] == "retail/eu"
    assert moved.namespace["parent_id"] is not None


def test_projects_keyset_pages_follow_link(client: gitlab.Gitlab, gl: FakeGitLab) -> None:
    ids = [gl.create_project(f"acme/p{n}").id for n in range(3)]

    listed = client.projects.list(iterator=True, pagination="keyset", order_by="id", sort="asc", per_page=2)

    assert [p.get_id() for p in listed] == ids
    # GitLab links to `id_after=<last id>` after every non-empty page, so the last page is empty.
    assert gl.call_count("/api/v4/projects") == 3


def test_projects_keyset_needs_order_by_id(client: gitlab.Gitlab, gl: FakeGitLab) -> None:
    gl.create_project("acme/p")

    with pytest.raises(gitlab.GitlabListError) as err:
        client.projects.list(iterator=True, pagination="keyset", order_by="name")

    assert err.value.response_code == 405


def test_projects_offset_pages(client: gitlab.Gitlab, gl: FakeGitLab) -> None:
    ids = [gl.create_project(f"acme/p{n}").id for n in range(5)]

    listed = client.projects.list(get_all=True, per_page=2)

    assert [p.get_id() for p in listed] == ids[::-1]  # GitLab's default: created_at desc
    assert gl.call_count("/api/v4/projects") == 3


# -- branches -------------------------------------------------------------------------------------


def test_branch_reads_git_every_time(client: gitlab.Gitlab, shop: FakeProject) -> None:
    first = shop.commit({JAVA_A: "class A {}\n"}, "add A")
    project = client.projects.get(shop.id, lazy=True)
    assert project.branches.get("main").commit["id"] == first

    second = shop.commit({JAVA_A: "class A { int x; }\n"}, "grow A\n\nwith a body")

    branch = project.branches.get("main")
    assert branch.commit["id"] == second
    assert branch.commit["parent_ids"] == [first]
    assert (branch.commit["title"], branch.commit["message"]) == ("grow A", "grow A\n\nwith a body\n")
    assert branch.default is True


def test_branch_with_slash_and_missing_branch(client: gitlab.Gitlab, shop: FakeProject) -> None:
    base = shop.commit({JAVA_A: "class A {}\n"}, "add A")
    shop.create_branch("feature/x", base)
    project = client.projects.get(shop.id, lazy=True)

    assert project.branches.get("feature/x").default is False
    with pytest.raises(gitlab.GitlabGetError) as err:
        project.branches.get("nope")
    assert err.value.error_message == "404 Branch Not Found"


# -- compare --------------------------------------------------------------------------------------


def test_compare_add_modify_delete_rename(client: gitlab.Gitlab, shop: FakeProject) -> None:
    base = shop.commit({JAVA_A: "class A {}\n", "B.java": "class B {}\n", "C.java": "class C {\n int c;\n}\n"}, "1")
    middle = shop.commit({JAVA_A: "class A { int a; }\n", "B.java": None, "N.java": "class N {}\n"}, "2")
    head = shop.rename("C.java", "src/C.java", "3")
    project = client.projects.get(shop.id, lazy=True)

    cmp = as_dict(project.repository_compare(base, head, straight=True))

    assert [c["id"] for c in cmp["commits"]] == [middle, head]  # oldest first
    assert cmp["commit"]["id"] == head
    assert (cmp["compare_timeout"], cmp["compare_same_ref"]) == (False, False)
    diffs = {d["new_path"]: d for d in cmp["diffs"]}
    assert set(diffs) == {JAVA_A, "B.java", "N.java", "src/C.java"}
    assert diffs["N.java"]["new_file"] is True and diffs["N.java"]["a_mode"] == "0"
    assert diffs["B.java"]["deleted_file"] is True and diffs["B.java"]["b_mode"] == "0"
    assert diffs["src/C.java"]["renamed_file"] is True and diffs["src/C.java"]["old_path"] == "C.java"
    assert diffs[JAVA_A]["diff"] == "@@ -1 +1 @@\n-class A {}\n+class A { int a; }\n"
    assert not any(d["new_file"] or d["deleted_file"] or d["renamed_file"] for d in [diffs[JAVA_A]])


def test_compare_overflow_sets_compare_timeout(client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject) -> None:
    base = shop.commit({"a.txt": "a"}, "1")
    head = shop.commit({"b.txt": "b", "c.txt": "c", "d.txt": "d"}, "2")
    gl.max_diff_files = 2

    cmp = as_dict(client.projects.get(shop.id, lazy=True).repository_compare(base, head, straight=True))

    assert cmp["compare_timeout"] is True
    assert len(cmp["diffs"]) == 2


def test_compare_after_force_push_straight_versus_merge_base(client: gitlab.Gitlab, shop: FakeProject) -> None:
    root = shop.commit({"keep.txt": "k"}, "root")
    old_head = shop.commit({"gone.txt": "g"}, "pushed, then force-pushed away")
    shop.force_reset("main", root)
    new_head = shop.commit({"new.txt": "n"}, "new history")
    project = client.projects.get(shop.id, lazy=True)

    straight = as_dict(project.repository_compare(old_head, new_head, straight=True))
    merge_base = as_dict(project.repository_compare(old_head, new_head))

    assert {(d["new_path"], d["deleted_file"]) for d in straight["diffs"]} == {("gone.txt", True), ("new.txt", False)}
    assert [d["new_path"] for d in merge_base["diffs"]] == ["new.txt"]  # from...to hides the deleted file


def test_compare_unknown_sha_is_ref_not_found(client: gitlab.Gitlab, shop: FakeProject) -> None:
    head = shop.commit({"a.txt": "a"}, "1")

    with pytest.raises(gitlab.GitlabGetError) as err:
        client.projects.get(shop.id, lazy=True).repository_compare("0" * 40, head, straight=True)

    assert (err.value.response_code, err.value.error_message) == (404, "404 Ref Not Found")


def test_compare_same_ref(client: gitlab.Gitlab, shop: FakeProject) -> None:
    head = shop.commit({"a.txt": "a"}, "1")

    cmp = as_dict(client.projects.get(shop.id, lazy=True).repository_compare(head, "main", straight=True))

    assert (cmp["compare_same_ref"], cmp["commit"], cmp["commits"], cmp["diffs"]) == (True, None, [], [])


# -- tree -----------------------------------------------------------------------------------------


def test_tree_keyset_pages_follow_link(client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject) -> None:
    files = {JAVA_A: "class A {}\n", "src/main/java/B.java": "class B {}\n", "pom.xml": "<project/>\n"}
    sha = shop.commit(files | {"README.md": "hi\n"}, "1")

    entries = list(
        client.projects.get(shop.id, lazy=True).repository_tree(
            ref=sha, recursive=True, iterator=True, pagination="keyset", per_page=2
        )
    )

    blobs = {e["path"]: e["id"] for e in entries if e["type"] == "blob"}
    assert blobs == {path: git(shop, "rev-parse", f"{sha}:{path}") for path in [*files, "README.md"]}
    trees = [e["path"] for e in entries if e["type"] == "tree"]
    assert trees == ["src", "src/main", "src/main/java"]
    assert [e["type"] for e in entries] == ["tree"] * 3 + ["blob"] * 4  # Gitaly's TREES_FIRST
    assert entries[0]["mode"] == "040000" and entries[-1]["mode"] == "100644"
    assert gl.call_count("/repository/tree") == 4  # 7 entries, 2 a page, no link after the last page


def test_tree_offset_pages(client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject) -> None:
    sha = shop.commit({f"f{n}.txt": str(n) for n in range(5)}, "1")

    entries = client.projects.get(shop.id, lazy=True).repository_tree(ref=sha, get_all=True, per_page=2)

    assert sorted(e["path"] for e in entries) == [f"f{n}.txt" for n in range(5)]
    assert gl.call_count("/repository/tree") == 3


def test_tree_of_empty_repository_is_404(client: gitlab.Gitlab, shop: FakeProject) -> None:
    with pytest.raises(gitlab.GitlabGetError) as err:
        client.projects.get(shop.id, lazy=True).repository_tree(recursive=True, get_all=True)

    assert err.value.error_message == "404 Tree Not Found"


# -- files and blobs ------------------------------------------------------------------------------


def test_raw_file_by_path(client: gitlab.Gitlab, shop: FakeProject) -> None:
    sha = shop.commit({JAVA_A: "class A {}\n"}, "1")
    shop.commit({JAVA_A: "class A { int changed; }\n"}, "2")

    data = client.projects.get(shop.id, lazy=True).files.raw(file_path=JAVA_A, ref=sha)

    assert data == b"class A {}\n"


def test_file_head_headers(client: gitlab.Gitlab, shop: FakeProject) -> None:
    sha = shop.commit({JAVA_A: "class A {}\n"}, "1")
    later = shop.commit({"other.txt": "x"}, "2")

    headers = client.projects.get(shop.id, lazy=True).files.head(JAVA_A, ref=later)

    assert headers["X-Gitlab-Blob-Id"] == git(shop, "rev-parse", f"{sha}:{JAVA_A}")
    assert headers["X-Gitlab-Size"] == str(len("class A {}\n"))
    assert (headers["X-Gitlab-Commit-Id"], headers["X-Gitlab-Last-Commit-Id"]) == (later, sha)
    assert (headers["X-Gitlab-File-Path"], headers["X-Gitlab-File-Name"]) == (JAVA_A, "A.java")


def test_raw_file_missing_is_404(client: gitlab.Gitlab, shop: FakeProject) -> None:
    sha = shop.commit({JAVA_A: "class A {}\n"}, "1")

    with pytest.raises(gitlab.GitlabGetError) as err:
        client.projects.get(shop.id, lazy=True).files.raw(file_path="src/main/java/Nope.java", ref=sha)

    assert (err.value.response_code, err.value.error_message) == (404, "404 File Not Found")


def test_raw_blob_by_sha_keeps_bytes(client: gitlab.Gitlab, shop: FakeProject) -> None:
    payload = bytes(range(256))
    sha = shop.commit({"lib/blob.bin": payload}, "1")

    blob_sha = git(shop, "rev-parse", f"{sha}:lib/blob.bin")

    assert client.projects.get(shop.id, lazy=True).repository_raw_blob(blob_sha) == payload


# -- auth, faults and retries ---------------------------------------------------------------------


def test_wrong_token_is_401(gl: FakeGitLab, shop: FakeProject) -> None:
    with (
        gitlab.Gitlab(gl.url, private_token="glpat-wrong") as api,
        pytest.raises(gitlab.GitlabAuthenticationError) as err,
    ):
        api.projects.get(shop.id)

    assert (err.value.response_code, err.value.error_message) == (401, "401 Unauthorized")


def test_bearer_token_is_accepted(gl: FakeGitLab, shop: FakeProject) -> None:
    with gitlab.Gitlab(gl.url, oauth_token=TOKEN) as api:
        assert api.projects.get(shop.id).get_id() == shop.id


def test_500_then_success_is_retried(
    client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject, sleeps: list[float]
) -> None:
    head = shop.commit({"a.txt": "a"}, "1")
    gl.fail_next(1, status=500, path_contains="/repository/compare")

    cmp = as_dict(client.projects.get(shop.id, lazy=True).repository_compare(head, head, straight=True))

    assert cmp["compare_same_ref"] is True
    assert gl.call_count("/repository/compare") == 2
    assert sleeps == [0.1]  # python-gitlab's first backoff step


def test_429_waits_retry_after(client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject, sleeps: list[float]) -> None:
    gl.fail_next(1, status=429, retry_after="7")

    assert client.projects.get(shop.id).get_id() == shop.id
    assert sleeps == [7]
    assert gl.call_count(f"/projects/{shop.id}") == 2


def test_429_looks_like_rack_attack(gl: FakeGitLab, shop: FakeProject) -> None:
    gl.fail_next(1, status=429, retry_after="3")

    response = requests.get(f"{gl.url}/api/v4/projects/{shop.id}", headers={"PRIVATE-TOKEN": TOKEN}, timeout=5)

    assert (response.status_code, response.text) == (429, "Retry later\n")
    assert response.headers["Retry-After"] == "3"
    assert int(response.headers["RateLimit-Reset"]) >= int(time.time())


def test_faults_only_hit_matching_paths(
    client: gitlab.Gitlab, gl: FakeGitLab, shop: FakeProject, sleeps: list[float]
) -> None:
    shop.commit({"a.txt": "a"}, "1")
    gl.fail_next(2, status=503, path_contains="/repository/branches")
    project = client.projects.get(shop.id)

    assert project.branches.get("main").name == "main"
    assert gl.calls[0] == ("GET", f"/api/v4/projects/{shop.id}")
    assert gl.call_count("/repository/branches/main") == 3
    assert len(sleeps) == 2


def test_unknown_route_is_404(gl: FakeGitLab) -> None:
    response = requests.get(f"{gl.url}/api/v4/nothing/here", headers={"PRIVATE-TOKEN": TOKEN}, timeout=5)

    assert (response.status_code, response.json()) == (404, {"error": "404 Not Found"})
