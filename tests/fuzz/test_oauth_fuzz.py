"""Hypothesis over OAuth dynamic client registration (issue 24): hostile bodies never fail inside, and
nothing refused is kept.

The served app with OAuth on (`create_app`, limits of `JAVAKB_OAUTH__*` as shipped except the rate
and counts, raised so every draw reaches the size checks and the SDK's handler). Each draw is a
registration whose fields are known RFC 7591 names or random ones, with hostile, random, long or
too many values, or raw bytes. Invariants: a 201, 400, 413 or 429, never 5xx; the client count
grows by one exactly when the answer is 201; what a 201 echoes fits the field cap.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from entry.web import create_app
from mcp_server.oauth_limits import ClientLimits
from tests.conftest import REDIS
from tests.fuzz.strategies import HOSTILE, JSON_VALUE
from tests.mcp_server.test_oauth_limits import oauth_settings
from tests.support.tenants import ManualClock

FIELDS = [
    "client_name", "redirect_uris", "grant_types", "response_types", "scope", "contacts", "client_uri",
    "logo_uri", "jwks", "token_endpoint_auth_method", "application_type", "software_id",
]  # fmt: skip
VALUES = st.one_of(
    HOSTILE,
    JSON_VALUE,
    st.text(min_size=990, max_size=1010),  # both sides of the 1,000-character cap
    st.lists(st.sampled_from(["http://127.0.0.1:9/cb", "https://x.example/cb", "\x00"]), max_size=30),
    st.just(["http://127.0.0.1:9/cb"]),
)
REGISTRATIONS = st.one_of(
    st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=20)), VALUES, max_size=6).map(json.dumps),
    st.fixed_dictionaries({"redirect_uris": st.just(["http://127.0.0.1:9/cb"]), "client_name": VALUES}).map(json.dumps),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
)


@pytest.fixture(scope="module")
def served(pg_dsn: str) -> Iterator[tuple[TestClient, ClientLimits]]:
    limits = {"rate_per_s": 1e6, "rate_burst": 10**6, "max_clients": 10**6, "max_registrations_per_address": 10**6}
    app = create_app(oauth_settings(pg_dsn, REDIS, **limits), clock=ManualClock())
    with TestClient(app) as client:
        yield client, app.state.oauth_limits


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(body=REGISTRATIONS)
def test_a_hostile_registration_is_refused_or_kept_whole_never_a_5xx(
    served: tuple[TestClient, ClientLimits], body: str
) -> None:
    client, limits = served
    before = limits.clients
    answer = client.post(
        "/register", content=body.encode("utf-8", "surrogatepass"), headers={"content-type": "application/json"}
    )
    assert answer.status_code in (201, 400, 413, 429), (answer.status_code, answer.text[:300])
    assert limits.clients == before + (answer.status_code == 201)
    if answer.status_code == 201:
        registered: dict[str, Any] = answer.json()
        assert all(len(v) <= 1000 for v in registered.values() if isinstance(v, str))
        assert all(len(v) <= 20 for v in registered.values() if isinstance(v, list))
