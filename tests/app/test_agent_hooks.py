"""The agent hooks (issue 16): `javakb hook`, `install-agent-hooks`, and `javakb context` through a service.

Config files are written under temporary HOME and project folders (`HOME` is a process edge), always
over a config the user already had, which must survive install and removal byte for byte in meaning.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from app.agents.hook import GUIDE, Client, run_hook
from app.agents.hook import main as hook_main
from app.agents.install import RULE_MARK, hook_command, install, is_ours
from app.core.errors import ConfigError
from app.core.settings import Settings
from app.sync.local_index import index_directory
from entry.cli import main
from entry.deps import open_deps
from entry.local_api import serving, socket_path
from tests.app.test_cli_startup import CLIENTS, WEB_STACK, modules_after
from tests.support.java_fixtures import SHOP_DIR

ROOT: Final = Path(__file__).resolve().parents[2]
TASK: Final = "Make OwnerService.find throw OwnerNotFoundException instead of returning an empty Optional"
USER_CLAUDE: Final[dict[str, Any]] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/remind-branch"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard"}]}],
    },
}
USER_CURSOR: Final[dict[str, Any]] = {
    "version": 1,
    "hooks": {"beforeShellExecution": [{"command": "./guard.sh"}], "sessionStart": [{"command": "./hello.sh"}]},
}


def command(client: Client) -> str:
    return hook_command("/opt/kb/.venv/bin/javakb", client, Path("/srv/kb/javakb.sock"))


def write(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_our_entries_are_told_from_the_users() -> None:
    assert is_ours({"command": command(Client.CLAUDE_CODE)}, Client.CLAUDE_CODE)
    assert is_ours({"command": "javakb hook cursor"}, Client.CURSOR)
    assert is_ours({"command": hook_command("/v/bin/javakb-hook", Client.CURSOR, None)}, Client.CURSOR)
    assert hook_command("/v/bin/javakb-hook", Client.CURSOR, None) == "/v/bin/javakb-hook cursor"
    assert not is_ours({"command": "javakb hook cursor"}, Client.CLAUDE_CODE)
    assert not is_ours({"command": "~/bin/javakb-hook-wrapper claude-code"}, Client.CLAUDE_CODE)
    assert not is_ours({"command": "echo javakb"}, Client.CURSOR)


def test_claude_code_hook_is_merged_into_the_users_settings_idempotently(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    write(settings, USER_CLAUDE)

    first = install([Client.CLAUDE_CODE], home=tmp_path, project=None, command=command, remove=False)
    after_first = read(settings)
    second = install([Client.CLAUDE_CODE], home=tmp_path, project=None, command=command, remove=False)

    assert [c.action for c in first] == ["written"] and [c.action for c in second] == ["unchanged"]
    assert read(settings) == after_first
    groups = after_first["hooks"]["UserPromptSubmit"]
    assert groups[0] == USER_CLAUDE["hooks"]["UserPromptSubmit"][0]  # the user's hook, kept first
    assert groups[1]["hooks"] == [{"type": "command", "command": command(Client.CLAUDE_CODE), "timeout": 5}]
    assert after_first["model"] == "opus" and after_first["hooks"]["PreToolUse"] == USER_CLAUDE["hooks"]["PreToolUse"]


def test_removing_takes_out_exactly_what_was_added(tmp_path: Path) -> None:
    settings, hooks = tmp_path / ".claude" / "settings.json", tmp_path / ".cursor" / "hooks.json"
    write(settings, USER_CLAUDE)
    write(hooks, USER_CURSOR)

    install(list(Client), home=tmp_path, project=None, command=command, remove=False)
    removed = install(list(Client), home=tmp_path, project=None, command=command, remove=True)
    again = install(list(Client), home=tmp_path, project=None, command=command, remove=True)

    assert read(settings) == USER_CLAUDE and read(hooks) == USER_CURSOR
    assert [c.action for c in removed] == ["written", "written"]
    assert [c.action for c in again] == ["unchanged", "unchanged"]


def test_a_file_the_install_created_is_deleted_by_the_removal(tmp_path: Path) -> None:
    install(list(Client), home=tmp_path, project=None, command=command, remove=False)
    cursor = read(tmp_path / ".cursor" / "hooks.json")

    assert cursor == {"version": 1, "hooks": {"sessionStart": [{"command": command(Client.CURSOR)}]}}
    install(list(Client), home=tmp_path, project=None, command=command, remove=True)
    assert not (tmp_path / ".claude" / "settings.json").exists() and not (tmp_path / ".cursor" / "hooks.json").exists()


def test_a_reinstall_with_another_socket_replaces_ours(tmp_path: Path) -> None:
    install([Client.CLAUDE_CODE], home=tmp_path, project=None, command=command, remove=False)

    def moved(client: Client) -> str:
        return hook_command("javakb", client, Path("/elsewhere.sock"))

    install([Client.CLAUDE_CODE], home=tmp_path, project=None, command=moved, remove=False)

    groups = read(tmp_path / ".claude" / "settings.json")["hooks"]["UserPromptSubmit"]
    assert [h["command"] for g in groups for h in g["hooks"]] == [moved(Client.CLAUDE_CODE)]


def test_the_project_install_writes_the_cursor_rule_and_removes_it(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    rule = project / ".cursor" / "rules" / "java-kb.mdc"

    changes = install([Client.CURSOR], home=home, project=project, command=command, remove=False)

    assert [c.path for c in changes] == [project / ".cursor" / "hooks.json", rule]
    text = rule.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "alwaysApply: true" in text and "auto_context" in text and RULE_MARK in text
    assert not home.exists()  # the user's own config is not touched by a project install
    install([Client.CURSOR], home=home, project=project, command=command, remove=True)
    assert not rule.exists()


def test_a_rule_file_someone_else_wrote_is_never_overwritten(tmp_path: Path) -> None:
    rule = tmp_path / ".cursor" / "rules" / "java-kb.mdc"
    rule.parent.mkdir(parents=True)
    rule.write_text("my own rule\n", encoding="utf-8")

    with pytest.raises(ConfigError, match="was not written by javakb"):
        install([Client.CURSOR], home=tmp_path, project=tmp_path, command=command, remove=False)
    install([Client.CURSOR], home=tmp_path, project=tmp_path, command=command, remove=True)
    assert rule.read_text(encoding="utf-8") == "my own rule\n"


def test_a_broken_config_is_refused_and_left_alone(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json", encoding="utf-8")

    with pytest.raises(ConfigError, match="not valid JSON"):
        install([Client.CLAUDE_CODE], home=tmp_path, project=None, command=command, remove=False)
    assert settings.read_text(encoding="utf-8") == "{not json"


def test_the_cli_installs_into_home_and_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(tmp_path / "kb"))

    assert main(["install-agent-hooks", "--claude-code"]) == 0
    entry = read(tmp_path / ".claude" / "settings.json")["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert entry["command"].endswith(f" claude-code --socket {tmp_path / 'kb' / 'javakb.sock'}")
    assert is_ours(entry, Client.CLAUDE_CODE)
    assert main(["install-agent-hooks", "--claude-code", "--remove"]) == 0
    assert "settings.json: removed" in capsys.readouterr().out


def test_cursor_gets_the_guide_at_session_start_and_never_a_block() -> None:
    start, prompt = io.StringIO(), io.StringIO()

    run_hook(Client.CURSOR, io.StringIO('{"hook_event_name": "sessionStart"}'), start, socket=None)
    run_hook(
        Client.CURSOR, io.StringIO('{"hook_event_name": "beforeSubmitPrompt", "prompt": "x"}'), prompt, socket=None
    )

    assert json.loads(start.getvalue()) == {"continue": True, "additional_context": GUIDE}
    assert json.loads(prompt.getvalue()) == {"continue": True}


@pytest.mark.parametrize("stdin", ["", "not json", '{"prompt": 3}', '{"prompt": "/compact"}', '{"prompt": "ok"}'])
def test_bad_or_empty_input_gives_no_context_and_exit_0(stdin: str, tmp_path: Path) -> None:
    out = io.StringIO()

    assert run_hook(Client.CLAUDE_CODE, io.StringIO(stdin), out, socket=tmp_path / "none.sock") == 0
    assert out.getvalue() == ""


HOOK_COMMANDS: Final = (
    [sys.executable, "-m", "entry.cli", "hook"],
    [str(Path(sys.executable).with_name("javakb-hook"))],
)


def hook_process(
    tmp_path: Path, hook: list[str], socket: Path, prompt: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAVAKB_")}
    env["JAVAKB_QDRANT__PATH"] = str(tmp_path / "kb")
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt, "session_id": "s"})
    started = time.perf_counter()
    run = subprocess.run(
        [*hook, "claude-code", "--socket", str(socket), "--timeout", "0.5"],
        input=payload,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return run, time.perf_counter() - started


@pytest.mark.parametrize("hook", HOOK_COMMANDS, ids=["javakb hook", "javakb-hook"])
def test_with_the_server_down_the_hook_exits_0_at_once_with_no_context(tmp_path: Path, hook: list[str]) -> None:
    stale = tmp_path / "kb" / "javakb.sock"
    stale.parent.mkdir(parents=True)
    stale.write_text("")  # a socket file left by a service that is gone

    for socket in (tmp_path / "absent.sock", stale):
        run, seconds = hook_process(tmp_path, hook, socket, TASK)
        assert (run.returncode, run.stdout) == (0, ""), run.stderr
        assert seconds < 10  # the interpreter's start on a loaded machine: no wait on the service


def test_bad_arguments_never_block_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    assert hook_main(["codex", "--bogus"]) == 0  # exit 2 would block Claude Code's prompt
    assert capsys.readouterr().out == ""


def test_javakb_hook_imports_only_the_standard_library_and_its_client(tmp_path: Path) -> None:
    code = (
        'import io, sys\nsys.stdin = io.StringIO(\'{"prompt": "who calls OwnerService.find"}\')\n'
        "from app.agents.hook import main\nmain(['claude-code', '--socket', '/nonexistent.sock'])"
    )

    loaded = modules_after(code, tmp_path)
    assert not loaded & (WEB_STACK | CLIENTS | {"pydantic", "pydantic_settings", "pipeline", "asyncio", "numpy"})


def test_the_hook_imports_neither_the_web_stack_nor_a_client(tmp_path: Path) -> None:
    code = (
        'import io, sys\nsys.stdin = io.StringIO(\'{"prompt": "who calls OwnerService.find"}\')\n'
        "from entry.cli import main\nmain(['hook', 'claude-code'])"
    )

    assert not modules_after(code, tmp_path) & (WEB_STACK | CLIENTS | {"qdrant_edge", "tree_sitter", "numpy"})


@pytest.fixture
def running_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A `javakb serve` stand-in holding an embedded store with the fixture, listening on its socket."""
    for name in list(os.environ):
        if name.upper().startswith("JAVAKB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(tmp_path / "kb"))
    monkeypatch.setenv("JAVAKB_QDRANT__ENGINE", "edge")  # a second opener is refused: the CLI must use the socket
    ready, stop = threading.Event(), threading.Event()

    async def service() -> None:
        async with open_deps(Settings()) as held, serving(held, socket_path(held.settings.qdrant)):
            await index_directory(held, SHOP_DIR, "acme/shop")
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)

    thread = threading.Thread(target=lambda: asyncio.run(service()))
    thread.start()
    try:
        assert ready.wait(60)
        path = socket_path(Settings().qdrant)
        assert path is not None
        yield path
    finally:
        stop.set()
        thread.join(30)


@pytest.mark.timeout(60)
def test_the_cli_asks_the_running_service_for_a_context(
    running_service: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["context", TASK]) == 0
    text = capsys.readouterr().out
    assert text.startswith("<java-kb-context>") and "OwnerService.find" in text

    assert main(["context", "write a haiku about autumn", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["text"] == "" and answer["results"] == [] and answer["relevance"] < answer["threshold"]


@pytest.mark.timeout(60)
def test_the_hook_injects_the_context_of_the_running_service(running_service: Path) -> None:
    out = io.StringIO()
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": TASK})

    assert run_hook(Client.CLAUDE_CODE, io.StringIO(payload), out, socket=running_service, timeout_s=10) == 0

    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    assert answer["additionalContext"].startswith("<java-kb-context>")
    assert "OwnerService.java" in answer["additionalContext"]


def test_the_context_command_refuses_a_budget_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["context", TASK, "--max-chars", "10"]) == 2
    assert "--max-chars must be within" in capsys.readouterr().err


def test_the_install_can_point_the_hook_at_a_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    token = tmp_path / "kb.token"

    assert main(["install-agent-hooks", "--claude-code", "--url", "https://kb.example.com"]) == 2
    assert "--url and --token-file go together" in capsys.readouterr().err
    assert (
        main(["install-agent-hooks", "--claude-code", "--url", "https://kb.example.com", "--token-file", str(token)])
        == 0
    )

    entry = read(tmp_path / ".claude" / "settings.json")["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert entry["command"].endswith(f" claude-code --url https://kb.example.com --token-file {token}")
    assert "kb.token" in entry["command"] and is_ours(entry, Client.CLAUDE_CODE)
