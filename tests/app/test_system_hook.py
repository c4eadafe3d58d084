"""`javakb admin install-hook` against the fake GitLab: creates the hook once, repairs it, refuses without rights."""

from __future__ import annotations

import argparse
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from app.core.access_settings import OAuthSettings
from app.core.errors import ConfigError
from app.core.settings import GitLabSettings, Settings
from app.ops.system_hook import plan_hook, receiver_url, wanted_hook
from entry.cli import main
from entry.cli_admin import run_install_hook
from entry.doctor import Verdict, judge_hooks
from testkit.fake_gitlab import FakeGitLab
from testkit.fake_gitlab_wire import system_hook_entity

SECRET = "x7Jq2mP9vL4sR8tW1zK6"
PUBLIC = "https://kb.example.com"


@pytest.fixture
def gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path, token="glpat-" + SECRET) as gl:
        yield gl


def settings_for(gl: FakeGitLab, token: str | None = None, secret: str | None = SECRET) -> Settings:
    return Settings(
        gitlab=GitLabSettings(
            url=gl.url, token=SecretStr(token or gl.token), webhook_secret=SecretStr(secret) if secret else None
        ),
        oauth=OAuthSettings(public_url=PUBLIC),
    )


def install(settings: Settings, url: str | None = None) -> str:
    out = io.StringIO()
    assert run_install_hook(argparse.Namespace(url=url), settings, out) == 0
    return out.getvalue().strip()


def test_creates_the_hook_once_then_re_applies_it(gitlab: FakeGitLab) -> None:
    settings = settings_for(gitlab)
    assert install(settings) == f"created system hook 1 for {PUBLIC}/hooks/gitlab"
    [hook] = gitlab.system_hooks
    assert hook["push_events"] is True and hook["repository_update_events"] is True
    assert hook["enable_ssl_verification"] is True and "token" not in hook
    assert gitlab.system_hook_tokens == {1: SECRET}
    assert judge_hooks(gitlab.system_hooks, PUBLIC).verdict is Verdict.OK  # what doctor then says

    again = install(settings)
    assert again == f"system hook 1 for {PUBLIC}/hooks/gitlab is set up (secret re-applied)"
    assert len(gitlab.system_hooks) == 1


def test_repairs_a_hook_without_push_events_and_a_new_secret(gitlab: FakeGitLab) -> None:
    gitlab.system_hooks.append(system_hook_entity(4, f"{PUBLIC}/hooks/gitlab", push_events=False))
    gitlab.system_hooks[0]["merge_requests_events"] = True
    gitlab.system_hooks.append(system_hook_entity(5, "https://other.example.com/hook"))
    line = install(settings_for(gitlab, secret="n3wS3cretValue-9876543"))
    assert line.endswith("(secret re-applied; fixed merge_requests_events, push_events)")
    assert gitlab.system_hooks[0]["push_events"] is True
    assert gitlab.system_hook_tokens == {4: "n3wS3cretValue-9876543"}
    assert gitlab.system_hooks[1]["url"] == "https://other.example.com/hook"  # others untouched


def test_a_members_token_is_refused_with_the_reason(gitlab: FakeGitLab) -> None:
    user = gitlab.directory.add_user("dev")
    err = io.StringIO()
    settings = settings_for(gitlab, token=user.token)
    with pytest.raises(Exception, match="needs an administrator's token"):
        run_install_hook(argparse.Namespace(url=None), settings, err)
    assert gitlab.system_hooks == []


def test_without_a_secret_or_url_it_says_what_to_set(gitlab: FakeGitLab, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="JAVAKB_GITLAB__WEBHOOK_SECRET"):
        install(settings_for(gitlab, secret=None))
    no_url = Settings(gitlab=GitLabSettings(url=gitlab.url, token=SecretStr(gitlab.token)))
    with pytest.raises(ConfigError, match="--url"):
        install(no_url)
    monkeypatch.setenv("JAVAKB_GITLAB__URL", gitlab.url)
    monkeypatch.setenv("JAVAKB_GITLAB__TOKEN", gitlab.token)
    assert main(["admin", "install-hook", "--url", PUBLIC]) == 1  # no secret: a clear error, exit 1


def test_the_plan_matches_by_url_and_lists_differences() -> None:
    wanted = wanted_hook(receiver_url("http://kb.local:8000/"))
    assert wanted["url"] == "http://kb.local:8000/hooks/gitlab" and wanted["enable_ssl_verification"] is False
    assert plan_hook([], wanted).hook_id is None
    listed = [system_hook_entity(9, "http://kb.local:8000/hooks/gitlab/")]
    assert plan_hook(listed, wanted).hook_id == 9
    assert plan_hook(listed, wanted).changes == ("enable_ssl_verification",)
    assert receiver_url(PUBLIC + "/hooks/gitlab") == PUBLIC + "/hooks/gitlab"
