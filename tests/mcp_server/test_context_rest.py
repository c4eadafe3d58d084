"""`GET /api/v1/context` (issue 16) on the running app, and the agent hook asking it instead of a local socket."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Final

import httpx

from app.agents.hook import Client, Remote, run_hook
from tests.mcp_server.conftest import TOKEN
from tests.support.live_app import LiveApp

TASK: Final = "Make OwnerService.find throw OwnerNotFoundException instead of returning an empty Optional"


def get(app: LiveApp, token: str | None = TOKEN, **params: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{app.base_url}/api/v1/context", params=params, headers=headers, timeout=30)


def test_a_task_gets_its_context(live_app: LiveApp) -> None:
    response = get(live_app, task=TASK, max_chars="3000")

    assert response.status_code == 200
    body = response.json()
    assert body["text"].startswith("<java-kb-context>") and len(body["text"]) <= 3000
    assert body["results"][0]["qualified_name"] == "com.acme.shop.core.service.OwnerService.find"
    assert body["results"][0]["role"] == "named"


def test_an_irrelevant_task_gets_an_empty_context(live_app: LiveApp) -> None:
    body = get(live_app, task="write a haiku about autumn").json()

    assert body["text"] == "" and body["results"] == [] and body["relevance"] < body["threshold"]


def test_bad_parameters_and_missing_credentials_are_refused(live_app: LiveApp) -> None:
    assert get(live_app, task=TASK, max_chars="10").status_code == 400
    assert get(live_app, task="").status_code == 400
    assert get(live_app, token=None, task=TASK).status_code == 401
    assert get(live_app, token="wrong", task=TASK).status_code == 401


def test_the_hook_asks_a_deployment_with_a_token_from_its_file(live_app: LiveApp, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": TASK})
    out = io.StringIO()

    remote = Remote(url=live_app.base_url, token_file=token_file)
    assert run_hook(Client.CLAUDE_CODE, io.StringIO(payload), out, socket=None, timeout_s=20, remote=remote) == 0

    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<java-kb-context>") and "OwnerService.java" in context


def test_a_refused_token_gives_no_context_and_exit_0(live_app: LiveApp, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("wrong", encoding="utf-8")
    out = io.StringIO()
    payload = json.dumps({"prompt": TASK})

    for remote in (Remote(url=live_app.base_url, token_file=token_file), Remote(url="x", token_file=tmp_path / "no")):
        assert run_hook(Client.CLAUDE_CODE, io.StringIO(payload), out, socket=None, remote=remote) == 0
    assert out.getvalue() == ""
