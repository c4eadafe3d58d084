from __future__ import annotations

import base64

import pytest

from app.errors import SignatureError
from hooks.auth import check_signature, check_token, sign, signing_key

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
    assert signing_key("plain") == b"plain"
    with pytest.raises(ValueError, match="base64"):
        signing_key("whsec_***")


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
