"""`javakb admin install-hook`: register (or repair) the GitLab system hook, idempotently.

The hook's wanted state is written once (`wanted_hook`); `plan_hook` compares it with what
`GET /hooks` lists (pure), and `install_hook` creates it (`POST /hooks`) or re-applies it with the
secret (`PUT /hooks/:id`: GitLab never returns a hook's token, so it cannot be compared and is
always sent again). Running it twice leaves one hook, configured the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from app.core.errors import ConfigError, GitLabError
from app.core.logs import escape
from app.core.settings import Settings
from app.gitlab.client import rest_root

RECEIVER_PATH = "/hooks/gitlab"
"""Where the receiver listens (the web app mounts it there; the hook is pointed at it)."""


def receiver_url(base_url: str) -> str:
    """The receiver's URL under this service's public base URL."""
    base = base_url.rstrip("/")
    return base if base.endswith(RECEIVER_PATH) else base + RECEIVER_PATH


def wanted_hook(url: str) -> dict[str, Any]:
    """The system hook this service needs (project events come with every system hook).

    Both push triggers: `repository_update` is on by default and reaches the receiver for every
    push; `push` (off by default) adds the commits. Duplicates of one push are coalesced.
    """
    return {
        "url": url,
        "push_events": True,
        "tag_push_events": False,
        "merge_requests_events": False,
        "repository_update_events": True,
        "enable_ssl_verification": url.startswith("https://"),
    }


@dataclass(frozen=True, slots=True)
class HookPlan:
    """What to do: create, or re-apply to the hook `hook_id` (and which fields differ)."""

    hook_id: int | None
    changes: tuple[str, ...]


def hooks_at(hooks: Sequence[dict[str, Any]], url: str) -> list[dict[str, Any]]:
    """The listed hooks that point at `url` (a trailing slash on either side ignored)."""
    return [h for h in hooks if str(h.get("url", "")).rstrip("/") == url.rstrip("/")]


def plan_hook(existing: list[dict[str, Any]], wanted: dict[str, Any]) -> HookPlan:
    """Match the wanted hook by URL among the listed ones (pure)."""
    same_url = hooks_at(existing, wanted["url"])
    if not same_url:
        return HookPlan(None, tuple(sorted(wanted)))
    hook = same_url[0]
    return HookPlan(int(hook["id"]), tuple(sorted(k for k, v in wanted.items() if k != "url" and hook.get(k) != v)))


async def install_hook(settings: Settings, base_url: str, client: httpx.AsyncClient) -> str:
    """Create or repair the system hook; a line saying what was done.

    Raises:
        ConfigError: no GitLab URL, token or webhook secret.
        GitLabError: GitLab refused (not an administrator's token) or failed.
    """
    gl = settings.gitlab
    root = rest_root(gl)
    if root is None:
        raise ConfigError("set JAVAKB_GITLAB__URL and JAVAKB_GITLAB__TOKEN (an administrator's token)")
    if gl.webhook_secret is None:
        raise ConfigError("set JAVAKB_GITLAB__WEBHOOK_SECRET: the hook sends it, the receiver checks it")
    api, headers = f"{root[0]}/hooks", root[1]
    wanted = wanted_hook(receiver_url(base_url))
    plan = plan_hook(await _call(client, "GET", api, headers), wanted)
    body = wanted | {"token": gl.webhook_secret.get_secret_value()}
    if plan.hook_id is None:
        created = await _call(client, "POST", api, headers, body)
        return f"created system hook {created['id']} for {wanted['url']}"
    await _call(client, "PUT", f"{api}/{plan.hook_id}", headers, body)
    fixed = f"; fixed {', '.join(plan.changes)}" if plan.changes else ""
    return f"system hook {plan.hook_id} for {wanted['url']} is set up (secret re-applied{fixed})"


async def _call(
    client: httpx.AsyncClient, method: str, url: str, headers: dict[str, str], body: dict[str, Any] | None = None
) -> Any:
    try:
        response = await client.request(method, url, headers=headers, json=body)
    except httpx.HTTPError as exc:
        raise GitLabError(f"GitLab cannot be reached: {exc}") from exc
    if response.status_code in (401, 403):
        raise GitLabError(f"GitLab refused {method} /hooks ({response.status_code}): it needs an administrator's token")
    if response.status_code >= 300:
        raise GitLabError(f"GitLab answered {method} /hooks with {response.status_code}: {escape(response.text, 200)}")
    return response.json()
