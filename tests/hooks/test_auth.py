from __future__ import annotations

import base64

import pytest

from app.core.errors import SignatureError
from hooks.auth import SignedHeaders, check_signature, check_token, sign, signed_headers, signing_key, verify

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
BODY = b'{"event_name":"push"}'


def headers(signature: str, timestamp: str = "1700000000", webhook_id: str = "msg_1") -> dict[str, str]:
    return {"webhook-id": webhook_id, "webhook-timestamp": timestamp, "webhook-signature": signature}


def test_token_must_match_exactly() -> None:
    check_token("s3cret", "s3cret")
    for wrong in (None, "", "s3cre", "s3cret "):
        with pytest.raises(SignatureError):
            check_token("s3cret", wrong)


def test_signing_key_decodes_whsec_secrets() -> None:
    assert signing_key(SECRET) == b"k" * 32
    with pytest.raises(ValueError, match="base64"):
        signing_key("whsec_***")


@pytest.mark.parametrize("malformed", ["plain", "whsec_", "whsec_ab=c"])
def test_a_signing_key_must_be_whsec_base64_of_something(malformed: str) -> None:
    with pytest.raises(ValueError, match=r"whsec_|base64|empty"):
        signing_key(malformed)


def test_an_empty_expected_token_matches_nothing_not_even_an_empty_one() -> None:
    for received in ("", None, "x"):
        with pytest.raises(SignatureError):
            check_token("", received)


def test_an_hmac_with_an_empty_key_never_verifies() -> None:
    signed = SignedHeaders(webhook_id="m", timestamp="1", signatures=(sign(b"", "m", "1", BODY),))
    with pytest.raises(SignatureError, match="no signing key"):
        verify(b"", signed, BODY)


@pytest.mark.parametrize("timestamp", ["9" * 300, "-5", " 1700000000", "1e9", "1700000000.5", "\u0661" * 10])
def test_a_malformed_timestamp_is_a_signature_error_not_a_crash(timestamp: str) -> None:
    key = signing_key(SECRET)
    with pytest.raises(SignatureError, match="webhook-timestamp"):
        check_signature(key, headers(sign(key, "msg_1", timestamp, BODY), timestamp), BODY, 1700000000, 300)


def test_a_non_ascii_signature_does_not_match_rather_than_crash() -> None:
    key = signing_key(SECRET)
    with pytest.raises(SignatureError, match="does not match"):
        check_signature(key, headers("v1,\xff\xfe"), BODY, now=1700000000, tolerance_s=300)


def test_the_headers_are_judged_without_the_body() -> None:
    assert signed_headers(headers("v1,a v1,b"), now=1700000000, tolerance_s=300) == SignedHeaders(
        webhook_id="msg_1", timestamp="1700000000", signatures=("v1,a", "v1,b")
    )
    with pytest.raises(SignatureError, match="webhook-id"):
        signed_headers(headers("v1,a", webhook_id="x" * 257), now=1700000000, tolerance_s=300)


def test_a_valid_signature_passes() -> None:
    key = signing_key(SECRET)
    check_signature(key, headers(sign(key, "msg_1", "1700000000", BODY)), BODY, now=1700000010, tolerance_s=300)


def test_one_of_several_signatures_may_match() -> None:
    key = signing_key(SECRET)
    good = sign(key, "msg_1", "1700000000", BODY)
    check_signature(key, headers(f"v1,AAAA {good}"), BODY, now=1700000000, tolerance_s=300)


def test_a_changed_body_fails() -> None:
    key = signing_key(SECRET)
    signed = headers(sign(key, "msg_1", "1700000000", BODY))
    with pytest.raises(SignatureError, match="does not match"):
        check_signature(key, signed, BODY + b" ", now=1700000000, tolerance_s=300)


def test_an_old_timestamp_fails() -> None:
    key = signing_key(SECRET)
    signed = headers(sign(key, "msg_1", "1700000000", BODY))
    with pytest.raises(SignatureError, match="tolerance"):
        check_signature(key, signed, BODY, now=1700000000 + 301, tolerance_s=300)


def test_missing_headers_fail() -> None:
    with pytest.raises(SignatureError, match="missing"):
        check_signature(b"k", {}, BODY, now=0, tolerance_s=300)
