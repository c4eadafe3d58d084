"""The fake GitLab's users, memberships and OAuth behave as GitLab's (`tests/support/fake_gitlab_users.py`)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from testkit.fake_gitlab import FakeGitLab
from testkit.fake_gitlab_users import DEVELOPER, GUEST, REPORTER


@pytest.fixture
def gl(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path) as fake:
        yield fake


def listed(gl: FakeGitLab, token: str, **params: str) -> set[str]:
    response = httpx.get(f"{gl.url}/api/v4/projects", params=params, headers={"PRIVATE-TOKEN": token})
    assert response.status_code == 200
    return {p["path_with_namespace"] for p in response.json()}


def test_the_projects_listing_follows_membership_visibility_and_levels(gl: FakeGitLab) -> None:
    private, internal, public = (gl.create_project(p) for p in ("g/sub/private", "h/internal", "h/public"))
    gl.set_project_attributes(internal.id, visibility="internal")
    gl.set_project_attributes(public.id, visibility="public")
    d = gl.directory
    member, guest, outsider = d.add_user("member"), d.add_user("guest"), d.add_user("outsider", external=True)
    d.add_group_member("g", member, DEVELOPER)  # inherited by g/sub
    d.add_project_member(private.id, guest, GUEST)

    assert listed(gl, member.token, min_access_level="20") == {"g/sub/private"}
    assert listed(gl, guest.token, min_access_level="20") == set()
    assert listed(gl, guest.token, membership="true") == {"g/sub/private"}
    assert listed(gl, guest.token) == {"g/sub/private", "h/internal", "h/public"}
    assert listed(gl, outsider.token) == {"h/public"}  # external users do not see internal projects


def test_a_group_share_grants_at_most_its_level(gl: FakeGitLab) -> None:
    project = gl.create_project("partners/api")
    contractor = gl.directory.add_user("contractor")
    gl.directory.add_group_member("contractors", contractor, DEVELOPER)
    gl.directory.share_group("partners", "contractors", GUEST)

    assert listed(gl, contractor.token, min_access_level="20") == set()
    assert listed(gl, contractor.token, min_access_level="10") == {project.path_with_namespace}
    gl.directory.share_group("partners", "contractors", REPORTER)
    assert listed(gl, contractor.token, min_access_level="20") == {project.path_with_namespace}


def test_is_admin_is_shown_to_administrators_only(gl: FakeGitLab) -> None:
    user, admin = gl.directory.add_user("user"), gl.directory.add_user("admin", is_admin=True)
    me = httpx.get(f"{gl.url}/api/v4/user", headers={"Authorization": f"Bearer {user.token}"}).json()
    boss = httpx.get(f"{gl.url}/api/v4/user", headers={"Authorization": f"Bearer {admin.token}"}).json()

    assert "is_admin" not in me and me["external"] is False and me["id"] == user.id
    assert boss["is_admin"] is True
    assert httpx.get(f"{gl.url}/api/v4/user", headers={"PRIVATE-TOKEN": "nope"}).status_code == 401


def test_the_token_endpoint_checks_the_client_the_code_and_pkce(gl: FakeGitLab) -> None:
    app = gl.directory.register_oauth_app("http://127.0.0.1:9/cb")
    gl.directory.signed_in = gl.directory.add_user("dev").id
    verifier = "v" * 50
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")

    def code() -> str:
        query = {"client_id": app.client_id, "redirect_uri": app.redirect_uri, "response_type": "code"}
        query |= {"state": "s", "code_challenge": challenge, "code_challenge_method": "S256"}
        redirect = httpx.get(f"{gl.url}/oauth/authorize", params=query)
        assert redirect.status_code == 302
        return parse_qs(urlsplit(redirect.headers["location"]).query)["code"][0]

    def exchange(grant: str, secret: str, code_verifier: str) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": grant, "redirect_uri": app.redirect_uri}
        form |= {"client_id": app.client_id, "client_secret": secret, "code_verifier": code_verifier}
        return httpx.post(f"{gl.url}/oauth/token", data=form)

    assert exchange(code(), "wrong", verifier).status_code == 401
    assert exchange(code(), app.client_secret, "w" * 50).json()["error"] == "invalid_grant"
    token = exchange(code(), app.client_secret, verifier).json()
    assert token["token_type"] == "Bearer" and token["expires_in"] == 7200
    user = httpx.get(f"{gl.url}/api/v4/user", headers={"Authorization": f"Bearer {token['access_token']}"})
    assert user.json()["username"] == "dev"
