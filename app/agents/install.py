"""`javakb install-agent-hooks`: the hook entries (and Cursor's project rule) written into an agent's config.

The edits are pure functions over the parsed JSON (`with_hook`, `without_hook`), so installing twice
changes nothing, another tool's entries and settings are kept as they are, and `--remove` takes out
exactly the entries this command writes: those whose command runs `javakb-hook <client>` or
`javakb hook <client>` (`is_ours`),
whatever socket or path they were written with. A container emptied by that removal goes too, and a
file left with nothing but what an empty one holds is deleted.

| client | user (default) | `--project DIR` |
| --- | --- | --- |
| Claude Code | `~/.claude/settings.json`: `UserPromptSubmit` | `DIR/.claude/settings.json` |
| Cursor | `~/.cursor/hooks.json`: `sessionStart` | `DIR/.cursor/hooks.json`, rule `.cursor/rules/java-kb.mdc` |
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.agents.hook import GUIDE, Client, Remote
from app.core.errors import ConfigError

HOOK_SCRIPT = "javakb-hook"
"""The console script of `app.agents.hook.main`: `javakb hook` without the CLI's start-up."""
CLAUDE_EVENT = "UserPromptSubmit"
CURSOR_EVENT = "sessionStart"
CLAUDE_TIMEOUT_S = 5
"""Claude Code's own limit on the hook (seconds): far above the hook's own timeout, so it never fires."""
RULE_NAME = "java-kb.mdc"
RULE_MARK = "<!-- written by javakb install-agent-hooks; `javakb install-agent-hooks --remove` deletes it -->"
RULE = f"""---
description: When to call the java-kb MCP tools (the organization's indexed Java code)
alwaysApply: true
---
{RULE_MARK}
{GUIDE}"""
_OURS = re.compile(r"(^|[\s/'\"])javakb(-hook['\"]?\s+|['\"]?\s+hook\s+)(?P<client>claude-code|cursor)\b")
Json = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One file written or removed, for the command's report."""

    path: Path
    action: str  # "written", "unchanged", "removed", "absent"


def hook_command(executable: str, client: Client, socket: Path | None, remote: Remote | None = None) -> str:
    """The shell command an agent runs: this installation's `javakb-hook` (or `javakb hook`), and where to ask."""
    hook = "" if Path(executable).name == HOOK_SCRIPT else " hook"
    command = f"{shlex.quote(executable)}{hook} {client}"
    if remote is not None:
        return command + f" --url {shlex.quote(remote.url)} --token-file {shlex.quote(str(remote.token_file))}"
    return command + (f" --socket {shlex.quote(str(socket))}" if socket is not None else "")


def is_ours(entry: Any, client: Client) -> bool:
    """Whether a hook entry runs `javakb hook <client>` (the entries this command writes)."""
    command = entry.get("command") if isinstance(entry, dict) else None
    found = _OURS.search(command) if isinstance(command, str) else None
    return found is not None and found.group("client") == client


def claude_with(settings: Json, command: str) -> Json:
    """Claude Code settings with our `UserPromptSubmit` hook (an older one of ours replaced)."""
    out = claude_without(settings)
    hooks = _mapping(out, "hooks")
    groups = _list(hooks, CLAUDE_EVENT)
    groups.append({"hooks": [{"type": "command", "command": command, "timeout": CLAUDE_TIMEOUT_S}]})
    return out


def claude_without(settings: Json) -> Json:
    """Claude Code settings without our hooks; groups and maps that held only ours go too."""
    out: Json = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(CLAUDE_EVENT), list):
        return out
    kept = []
    for group in hooks[CLAUDE_EVENT]:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(entries, list) and any(is_ours(e, Client.CLAUDE_CODE) for e in entries):
            group = {**group, "hooks": [e for e in entries if not is_ours(e, Client.CLAUDE_CODE)]}
            if not group["hooks"]:
                continue
        kept.append(group)
    _set_or_drop(out, hooks, CLAUDE_EVENT, kept)
    return out


def cursor_with(config: Json, command: str) -> Json:
    """Cursor's hooks.json with our `sessionStart` hook (an older one of ours replaced)."""
    out = cursor_without(config)
    out.setdefault("version", 1)
    _list(_mapping(out, "hooks"), CURSOR_EVENT).append({"command": command})
    return out


def cursor_without(config: Json) -> Json:
    """Cursor's hooks.json without our hooks, in any event; lists and maps that held only ours go too."""
    out: Json = json.loads(json.dumps(config))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, entries in list(hooks.items()):
        if isinstance(entries, list) and any(is_ours(e, Client.CURSOR) for e in entries):
            _set_or_drop(out, hooks, event, [e for e in entries if not is_ours(e, Client.CURSOR)])
    return out


def _mapping(parent: Json, key: str) -> Json:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key!r} is not a JSON object in the agent's config: fix it by hand first")
    return value


def _list(parent: Json, key: str) -> list[Any]:
    value = parent.setdefault(key, [])
    if not isinstance(value, list):
        raise ConfigError(f"{key!r} is not a JSON list in the agent's config: fix it by hand first")
    return value


def _set_or_drop(root: Json, hooks: Json, key: str, kept: list[Any]) -> None:
    if kept:
        hooks[key] = kept
        return
    del hooks[key]
    if not hooks:
        del root["hooks"]


def read_json(path: Path) -> Json:
    """A config file's JSON object ({} when it does not exist); a clear error, and nothing written, when it is bad."""
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix or move it, nothing was changed") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix or move it, nothing was changed")
    return value


def update_json(path: Path, edit: Callable[[Json], Json], empty: Json) -> Change:
    """Apply `edit` to a config file: written only when it changes, deleted when nothing but `empty` is left."""
    before = read_json(path)
    after = edit(before)
    if after == before:
        return Change(path=path, action="unchanged" if path.exists() else "absent")
    if after == empty or not after:
        path.unlink(missing_ok=True)
        return Change(path=path, action="removed")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".javakb-tmp")
    temporary.write_text(json.dumps(after, indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)  # whole or not at all: an agent reading it never sees half a file
    return Change(path=path, action="written")


def update_rule(path: Path, *, remove: bool) -> Change:
    """Write Cursor's project rule, or delete it (only when this command wrote it)."""
    present = path.read_text(encoding="utf-8") if path.exists() else None
    if remove:
        if present is None or RULE_MARK not in present:
            return Change(path=path, action="absent" if present is None else "unchanged")
        path.unlink()
        return Change(path=path, action="removed")
    if present == RULE:
        return Change(path=path, action="unchanged")
    if present is not None and RULE_MARK not in present:
        raise ConfigError(f"{path} exists and was not written by javakb: move it, nothing was changed")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RULE, encoding="utf-8")
    return Change(path=path, action="written")


def install(
    clients: list[Client], *, home: Path, project: Path | None, command: Callable[[Client], str], remove: bool
) -> list[Change]:
    """Install (or remove) the hooks of `clients` in the user's config under `home`, or in `project`'s."""
    base = project if project is not None else home
    changes: list[Change] = []
    for client in clients:
        if client is Client.CLAUDE_CODE:
            edit = claude_without if remove else lambda s: claude_with(s, command(Client.CLAUDE_CODE))
            changes.append(update_json(base / ".claude" / "settings.json", edit, {}))
        else:
            edit = cursor_without if remove else lambda s: cursor_with(s, command(Client.CURSOR))
            changes.append(update_json(base / ".cursor" / "hooks.json", edit, {"version": 1}))
            if project is not None:
                changes.append(update_rule(project / ".cursor" / "rules" / RULE_NAME, remove=remove))
    return changes
