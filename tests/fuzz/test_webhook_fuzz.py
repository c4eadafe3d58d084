"""Hypothesis against `POST /hooks/gitlab` over real HTTP: hostile bodies and headers with a valid token.

No 5xx; never "deferred" while PostgreSQL is up (bad input taken for an outage); and a refused
delivery leaves nothing in `deliveries` or `projects` and nothing on the queue.
"""

from __future__ import annotations

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.conftest import HOOK_SECRET, Fuzzed, kept
from tests.fuzz.strategies import HEADER_TEXT, VALID_EVENTS, WEBHOOK_BODIES, encode, field_paths, replace_field

FUZZ = settings(
    max_examples=120, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "Idempotency-Key": HEADER_TEXT,
        "X-Gitlab-Webhook-UUID": HEADER_TEXT,
        "webhook-id": HEADER_TEXT,
        "webhook-timestamp": HEADER_TEXT,
        "webhook-signature": HEADER_TEXT,
        "Content-Type": st.sampled_from(["application/json", "text/plain", "multipart/form-data"]),
    },
)


def deliver(fuzzed: Fuzzed, body: bytes, headers: dict[str, str]) -> httpx.Response:
    raw = {
        name.encode(): value.encode("latin-1") for name, value in (headers | {"X-Gitlab-Token": HOOK_SECRET}).items()
    }
    return fuzzed.http.post("/hooks/gitlab", content=body, headers=raw)


def check(fuzzed: Fuzzed, body: bytes, headers: dict[str, str]) -> None:
    before = kept(fuzzed)
    response = deliver(fuzzed, body, headers)
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400:
        assert kept(fuzzed) == before, response.text[:300]
    else:
        assert response.json()["status"] != "deferred", response.text[:300]


@FUZZ
@given(body=WEBHOOK_BODIES, headers=HEADERS)
def test_hostile_deliveries_are_4xx_and_leave_nothing(fuzzed: Fuzzed, body: bytes, headers: dict[str, str]) -> None:
    check(fuzzed, body, headers)


UNSTORABLE = ["a\x00b", "\ud800", 2**63, -1, 0, "x" * 5000]


def test_every_field_of_every_event_refuses_what_postgresql_cannot_store(fuzzed: Fuzzed) -> None:
    # Exhaustive where random draws are thin: each field, one unstorable value at a time.
    cases = [(event, path, bad) for event in VALID_EVENTS for path in field_paths(event) for bad in UNSTORABLE]
    for n, (event, path, bad) in enumerate(cases):
        check(fuzzed, encode(replace_field(event, path, bad)), {"Idempotency-Key": f"sweep-{n}"})
    assert len(cases) > 150


def test_known_hostile_deliveries_are_refused(fuzzed: Fuzzed) -> None:
    # The cases of issue 9, pinned (the fuzzer finds them too, this keeps them whatever it draws).
    push = b'{"event_name":"push","project_id":%s,"ref":"refs/heads/main","after":"%s","project":%s}'
    good_project = b'{"path_with_namespace":"acme/shop","default_branch":"main"}'
    for body in (
        push % (b"9223372036854775808", b"a" * 40, good_project),
        push % (b"1", b"a\\u0000", good_project),
        push % (b"1", b"\\ud800", good_project),
        push % (b"1", b"a" * 40, b'{"path_with_namespace":"a\\u0000b","default_branch":"main"}'),
        b'{"event_name":"x\\u0000"}',
        b"[" * 100_000,
    ):
        before = kept(fuzzed)
        response = deliver(fuzzed, body, {"Idempotency-Key": "pinned"})
        assert response.status_code == 400, (body[:80], response.text)
        assert kept(fuzzed) == before
    response = deliver(fuzzed, b"{}", {"Idempotency-Key": "k" * 8000})
    assert response.status_code == 400
