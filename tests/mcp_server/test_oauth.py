"""MCP OAuth end to end: the fake GitLab is the identity provider, fastmcp's OAuth proxy sits in front.

The whole flow runs over HTTP against the served app, as an MCP client does it (MCP authorization
spec 2025-06-18: RFC 9728 protected resource metadata, RFC 8414 authorization server metadata,
RFC 7591 registration, authorization code with PKCE S256): 401 with `resource_metadata`, metadata,
registration at the proxy, authorize → GitLab's `/oauth/authorize` (a signed-in user) → the proxy's
callback (which exchanges the code at GitLab's `/oauth/token` with PKCE) → the client's redirect →
token. Then a real MCP client calls tools with that token, as that GitLab user with that user's
permissions.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fastmcp import Client
from mcp.types import TextContent
from pydantic import SecretStr

from app.core.access_settings import OAuthSettings
from testkit.fake_gitlab import FakeGitLab
from tests.conftest import REDIS
from tests.support.tenants import ALL_REPOS, Org, serve_org

CLIENT_REDIRECT: Final = "http://127.0.0.1:9/callback"  # the MCP client's own loopback redirect (never called)


def gitlab_oauth(gl: FakeGitLab, base_url: str) -> OAuthSettings:
    app = gl.directory.register_oauth_app(f"{base_url}/auth/callback")
    return OAuthSettings(
        client_id=app.client_id,
        client_secret=SecretStr(app.client_secret),
        public_url=base_url,
        jwt_signing_key=SecretStr(secrets.token_hex(32)),
    )


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory, pg_dsn: str) -> Iterator[Org]:
    with serve_org(Path(tmp_path_factory.mktemp("oauth")), pg_dsn, REDIS, oauth=gitlab_oauth) as running:
        yield running


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def discover(http: httpx.Client, org: Org) -> dict[str, str]:
    """401 → protected resource metadata → authorization server metadata."""
    refused = http.post(org.app.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401
    found = re.search(r'resource_metadata="([^"]+)"', refused.headers["www-authenticate"])
    assert found is not None, refused.headers["www-authenticate"]
    resource = http.get(found.group(1)).json()
    assert resource["resource"].rstrip("/") == org.app.mcp_url
    (issuer,) = resource["authorization_servers"]
    metadata: dict[str, str] = http.get(f"{issuer.rstrip('/')}/.well-known/oauth-authorization-server").json()
    assert "S256" in metadata["code_challenge_methods_supported"]
    return metadata


def log_in(http: httpx.Client, org: Org, who: str) -> str:
    """Run the authorization code flow as GitLab user `who`; return the access token the proxy issues."""
    metadata = discover(http, org)
    client = http.post(
        metadata["registration_endpoint"],
        json={"redirect_uris": [CLIENT_REDIRECT], "token_endpoint_auth_method": "none", "client_name": "test"},
    ).json()
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(8)
    step = http.get(
        metadata["authorization_endpoint"],
        params={
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": CLIENT_REDIRECT,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
        },
    )  # fmt: skip
    org.gitlab.directory.signed_in = org.users[who].id
    step = follow_to_client(http, step)
    query = parse_qs(urlsplit(step.headers["location"]).query)
    assert query["state"] == [state]
    token = http.post(
        metadata["token_endpoint"],
        data={
            "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": CLIENT_REDIRECT,
            "client_id": client["client_id"], "code_verifier": verifier,
        },
    )  # fmt: skip
    assert token.status_code == 200, token.text
    access_token: str = token.json()["access_token"]
    return access_token


def follow_to_client(http: httpx.Client, response: httpx.Response) -> httpx.Response:
    """Follow redirects (and the proxy's consent page) until one points at the client's redirect URI."""
    for _ in range(10):
        if response.status_code == 200 and "<form" in response.text:
            response = approve(http, response)
            continue
        assert response.status_code in (302, 303, 307), (response.status_code, response.text[:500])
        location = response.headers["location"]
        if location.startswith(CLIENT_REDIRECT):
            return response
        response = http.get(location)
    raise AssertionError("the flow never came back to the client")


def approve(http: httpx.Client, page: httpx.Response) -> httpx.Response:
    """Submit the proxy's consent form with its approve button, as the user clicking it."""
    action = re.search(r'<form[^>]*action="([^"]*)"', page.text)
    fields = dict(re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page.text))
    button = re.search(r'<button[^>]*name="([^"]+)"[^>]*value="(approve|allow)"', page.text)
    assert action is not None and button is not None, page.text[:1000]
    fields[button.group(1)] = button.group(2)
    target = httpx.URL(str(page.url)).join(action.group(1).replace("&amp;", "&"))
    return http.post(target, data=fields)


@pytest.mark.parametrize("who", ["alice", "eve", "carol"])
async def test_an_oauth_login_reads_exactly_what_the_gitlab_user_may(org: Org, who: str) -> None:
    with httpx.Client(timeout=10, follow_redirects=False) as http:
        token = log_in(http, org, who)
    assert org.users[who].token != token  # the client holds the proxy's token, never GitLab's

    async with Client(org.app.mcp_url, auth=token) as client:
        listed = await client.call_tool("list_repos", {})
        found = await client.call_tool("get_symbol", {"name": "SharedService.handle"})
    assert listed.structured_content is not None and found.structured_content is not None
    assert {r["repo"] for r in listed.structured_content["results"]} == org.readable[who]
    assert {r["repo_path"] for r in found.structured_content["results"]} == org.readable[who]
    text = "".join(c.text for c in found.content if isinstance(c, TextContent))
    assert not {r for r in ALL_REPOS if r in text} - org.readable[who]


def test_the_gitlab_token_exchange_checked_pkce(org: Org) -> None:
    directory = org.gitlab.directory
    before, verified = directory.token_requests, directory.pkce_verified
    with httpx.Client(timeout=10, follow_redirects=False) as http:
        log_in(http, org, "bob")
    assert directory.token_requests == before + 1
    assert directory.pkce_verified == verified + 1
    assert org.gitlab.directory.oauth_tokens  # GitLab issued a token to the proxy


async def test_direct_bearers_still_work_next_to_oauth(org: Org) -> None:
    async with Client(org.app.mcp_url, auth=org.token("eve")) as client:
        listed = await client.call_tool("list_repos", {})
    assert listed.structured_content is not None
    assert {r["repo"] for r in listed.structured_content["results"]} == org.readable["eve"]
