"""The operator's `javakb` commands.

Tokens, migrations, `doctor`, `rebuild`, the system hook and the admin API (`admin reindex`,
`admin status`).

Like every command they import what they need when they run (`entry.cli`'s rule).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from app.core.access_settings import AdminToken, IndexJobToken, ServiceToken, token_digest
from app.core.errors import ConfigError
from app.core.settings import Settings

TOKEN_PREFIX = "jkb_"


def run_token(
    args: argparse.Namespace, settings: Settings, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Print a new token's settings entry (a JSON list, the value of the variable) and the token itself, once."""
    out, err = out or sys.stdout, err or sys.stderr
    kinds = [bool(args.admin), bool(args.repos), args.project is not None]
    if sum(kinds) != 1 or (args.project is not None and args.project < 1):
        print("javakb token: give one of --repos, --admin or --project ID", file=err)
        return 2
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    digest = token_digest(token)
    entry: AdminToken
    if args.admin:
        entry, variable = AdminToken(name=args.name, sha256=digest), "JAVAKB_ADMIN_TOKENS"
    elif args.project is not None:
        entry = IndexJobToken(name=args.name, sha256=digest, project_id=args.project)
        variable = "JAVAKB_INDEX_JOB_TOKENS"
    else:
        entry = ServiceToken(name=args.name, sha256=digest, repos=args.repos)
        variable = "JAVAKB_SERVICE_TOKENS"
    out.write(json.dumps([entry.model_dump()]) + "\n")
    err.write(f"javakb token: bearer token for {args.name!r} (shown once, only its sha256 goes into {variable}):\n")
    err.write(token + "\n")
    return 0


def run_migrate(args: argparse.Namespace, settings: Settings) -> int:
    """Apply pending migrations."""
    from app.db.migrate import apply_migrations

    applied = apply_migrations(settings.postgres.dsn.get_secret_value())
    print(f"javakb migrate: {applied} migrations applied", file=sys.stderr)
    return 0


def run_doctor(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Check every dependency; exit 1 when any check failed."""
    from entry import doctor

    name, checks = doctor.profile(settings, args.local)
    text, code = doctor.report(asyncio.run(doctor.examine(settings, checks)))
    print(f"profile: {name}\n{text}", file=out or sys.stdout)
    return code


def run_rebuild(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """`javakb admin rebuild` (`entry.rebuild_cli`)."""
    from entry.rebuild_cli import run_rebuild as run

    return run(args, settings, out or sys.stdout)


def run_install_hook(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Create or repair the system hook that sends pushes to this service's receiver."""
    base_url = args.url or settings.oauth.public_url
    if not base_url:
        raise ConfigError("give --url (this service's public base URL) or set JAVAKB_OAUTH__PUBLIC_URL")
    print(asyncio.run(_install_hook(settings, base_url)), file=out or sys.stdout)
    return 0


async def _install_hook(settings: Settings, base_url: str) -> str:
    import httpx

    from app.ops.system_hook import install_hook

    async with httpx.AsyncClient(timeout=settings.gitlab.timeout_s) as client:
        return await install_hook(settings, base_url, client)


def run_admin_reindex(args: argparse.Namespace, settings: Settings, out: TextIO | None = None, http: Any = None) -> int:
    """`POST /admin/reindex`, then the backfill's progress (followed with --watch); exit 1 if it or a project failed."""
    from app.ops import admin_client as ac

    out = out or sys.stdout
    body = ac.reindex_body(args.project, args.group, args.all, full=args.full, force=args.force)
    with http or ac.admin_client(settings) as client:
        accepted = ac.call(client, "POST", "/admin/reindex", json=body)
        print(f"backfill {accepted['backfill_id']} {accepted['status']}", file=out)
        return _follow(ac, client, accepted["backfill_id"], out, follow=args.watch)


def run_admin_status(
    args: argparse.Namespace,
    settings: Settings,
    out: TextIO | None = None,
    http: Any = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Projects by state and the syncs running, or one backfill's progress (refreshed with --watch, until Ctrl-C)."""
    from app.ops import admin_client as ac

    out = out or sys.stdout
    with http or ac.admin_client(settings) as client:
        if args.backfill is not None:
            return _follow(ac, client, args.backfill, out, follow=args.watch)
        with contextlib.suppress(KeyboardInterrupt):  # how a --watch ends
            ac.watch_status(client, ac.Screen(out, out.isatty()), follow=args.watch, sleep=sleep)
        return 0


def _follow(ac: Any, client: Any, backfill_id: int, out: TextIO, *, follow: bool) -> int:
    screen = ac.Screen(out, out.isatty())
    report = ac.watch(lambda: ac.call(client, "GET", f"/admin/backfills/{backfill_id}"), screen, follow=follow)
    if report["status"] in ac.FINISHED and report["progress"].get("failed"):
        failed = ac.call(client, "GET", f"/admin/backfills/{backfill_id}", params={"state": "failed"})
        print("\n".join(ac.failures(failed)), file=out)
    return 1 if report["status"] == "failed" or report["progress"].get("failed") else 0
