"""The one message for a service that cannot be reached at start: which setting, what was tried, what to do.

`javakb serve`, `web`, `worker` and `migrate` print it (no traceback unless `--debug`); the adapters
(`app.db.migrate`, `app.jobs.redis`) raise it in their typed errors.
"""

from __future__ import annotations

from urllib.parse import urlsplit

FIX = "start it (`scripts/services` starts the local PostgreSQL and Redis) or set {setting} to where it runs"


def unreachable(service: str, setting: str, where: str, cause: object) -> str:
    """`PostgreSQL at 127.0.0.1:1/javakb (JAVAKB_POSTGRES__DSN) cannot be reached: <cause>; start it ...`."""
    first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    return f"{service} at {where} ({setting}) cannot be reached: {first}; " + FIX.format(setting=setting)


def url_target(url: str) -> str:
    """`host:port/path` of a URL, without its user or password (a DSN's password is never printed)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path}"
