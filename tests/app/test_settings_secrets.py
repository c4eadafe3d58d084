"""Placeholder and short secrets refuse to start outside dev mode; empty ones are unset (issue 9)."""

from __future__ import annotations

import base64
import logging
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr, ValidationError

from app.core.errors import ConfigError
from app.core.settings import EmbeddingSettings, GitLabSettings, QdrantSettings, Settings
from app.core.startup_checks import check_secrets
from entry.cli import main
from tests.support.tokens import admin_token, service_token

STRONG = "q7Rk2v9XbW4mZp1sLc8N"
STRONG_WHSEC = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


def strong() -> Settings:
    return Settings(
        gitlab=GitLabSettings(
            token=SecretStr("glpat-" + STRONG), webhook_secret=SecretStr(STRONG), signing_token=SecretStr(STRONG_WHSEC)
        ),
        embedding=EmbeddingSettings(api_key=SecretStr("sk-" + STRONG)),
        qdrant=QdrantSettings(api_key=SecretStr(STRONG)),
    )


def test_strong_secrets_start() -> None:
    check_secrets(strong())


@pytest.mark.parametrize(
    ("section", "field", "value", "variable"),
    [
        ("gitlab", "webhook_secret", "changeme-changeme-changeme", "JAVAKB_GITLAB__WEBHOOK_SECRET"),
        ("gitlab", "webhook_secret", "short-secret", "JAVAKB_GITLAB__WEBHOOK_SECRET"),
        ("gitlab", "token", "secret-token-value-000", "JAVAKB_GITLAB__TOKEN"),
        ("gitlab", "signing_token", "whsec_" + base64.b64encode(b"k").decode(), "JAVAKB_GITLAB__SIGNING_TOKEN"),
        ("embedding", "api_key", "sk-test", "JAVAKB_EMBEDDING__API_KEY"),
        ("qdrant", "api_key", "password1234567890", "JAVAKB_QDRANT__API_KEY"),
        ("oauth", "client_secret", "changeme", "JAVAKB_OAUTH__CLIENT_SECRET"),
        ("oauth", "jwt_signing_key", "secret-key-for-jwt-000", "JAVAKB_OAUTH__JWT_SIGNING_KEY"),
    ],
)
def test_a_weak_secret_refuses_to_start_naming_it_but_not_its_value(
    section: str, field: str, value: str, variable: str
) -> None:
    base = strong()
    part = getattr(base, section).model_copy(update={field: SecretStr(value)})
    settings = base.model_copy(update={section: part})
    with pytest.raises(ConfigError, match=variable) as refused:
        check_secrets(settings)
    assert value not in str(refused.value)
    check_secrets(settings.model_copy(update={"dev_mode": True}))  # allowed in development


def test_no_webhook_secret_warns_at_start(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="app.core.settings"):
        check_secrets(Settings())
    assert "every GitLab delivery is refused" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="app.core.settings"):
        check_secrets(strong())
    assert caplog.text == ""


def test_the_dev_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_DEV_MODE", "true")
    assert Settings().dev_mode


def test_serve_refuses_to_start_with_a_placeholder_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JAVAKB_GITLAB__WEBHOOK_SECRET", "changeme")
    assert main(["serve"]) == 1
    assert "JAVAKB_GITLAB__WEBHOOK_SECRET is a placeholder" in capsys.readouterr().err


MARK = "s3cr3t-MARK-value-never-shown"


def secret_paths(model: type[BaseModel], prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every location of a `SecretStr` in `model`, found by type (a list's item as index 0)."""
    for name, field in model.model_fields.items():
        listed = typing.get_origin(field.annotation) is list
        here = (*prefix, name, 0) if listed else (*prefix, name)
        args = typing.get_args(field.annotation) or (field.annotation,)
        if SecretStr in args:
            yield here
        for arg in args:
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                yield from secret_paths(arg, here)


def nested(path: tuple[str | int, ...], value: object) -> Any:
    if not path:
        return value
    head, *rest = path
    inner = nested(tuple(rest), value)
    return [inner] if isinstance(head, int) else {head: inner}


SECRET_PATHS = list(secret_paths(Settings))


def test_the_secret_fields_are_found_by_type() -> None:
    assert ("gitlab", "signing_token") in SECRET_PATHS and ("postgres", "dsn") in SECRET_PATHS
    assert ("libraries", "repositories", 0, "password") in SECRET_PATHS
    assert len(SECRET_PATHS) >= 12


@pytest.mark.parametrize("path", SECRET_PATHS, ids=lambda p: ".".join(map(str, p)))
def test_a_malformed_secret_is_named_by_its_field_never_shown(path: tuple[str | int, ...]) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(**nested(path, [MARK]))  # not a string: refused, and pydantic would quote the input
    text = str(refused.value)
    assert MARK not in text and MARK not in repr(refused.value.errors())
    assert ".".join(map(str, path)) in text


def test_a_malformed_signing_key_at_start_names_the_variable_not_the_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JAVAKB_GITLAB__SIGNING_TOKEN", "whsec_" + MARK)
    monkeypatch.setenv("JAVAKB_PORT", "not-a-port")
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert MARK not in err
    assert "JAVAKB_GITLAB__SIGNING_TOKEN" in err and "not valid base64" in err
    assert "not-a-port" in err  # a setting that is no secret is still quoted


@pytest.mark.parametrize("token", ["changeme", "secret", "Password123", "admin", "test!", "TOKEN", "x", "7", "a$"])
def test_a_guessable_token_digest_warns_at_start_naming_the_entry(token: str, caplog: pytest.LogCaptureFixture) -> None:
    settings = strong().model_copy(update={"admin_tokens": [admin_token(token, "ops")]})
    with caplog.at_level(logging.WARNING, logger="app.core.settings"):
        check_secrets(settings)
    assert "JAVAKB_ADMIN_TOKENS entry 'ops' is the sha256 of a placeholder or a short string" in caplog.text
    assert f" {token} " not in caplog.text and f"'{token}'" not in caplog.text


def test_one_digest_as_admin_and_service_token_warns_at_start(caplog: pytest.LogCaptureFixture) -> None:
    shared = STRONG + "-shared"
    settings = strong().model_copy(
        update={
            "admin_tokens": [admin_token(shared, "ops")],
            "service_tokens": [service_token(STRONG + "-agents", name="agents"), service_token(shared, name="ci")],
        }
    )
    with caplog.at_level(logging.WARNING, logger="app.core.settings"):
        check_secrets(settings)
    assert caplog.messages == [
        "JAVAKB_ADMIN_TOKENS entry 'ops' and JAVAKB_SERVICE_TOKENS entry 'ci' have the same digest: one token holds"
        " both roles (javakb token makes a random one)"
    ]
    assert shared not in caplog.text


def test_random_distinct_tokens_start_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    settings = strong().model_copy(
        update={"admin_tokens": [admin_token(STRONG + "a")], "service_tokens": [service_token(STRONG + "b")]}
    )
    with caplog.at_level(logging.WARNING, logger="app.core.settings"):
        check_secrets(settings)
    assert caplog.text == ""
