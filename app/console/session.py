"""Admin sessions for a browser: an opaque id in a cookie, what it stands for in Redis (docs/decisions.md).

Signing in with an admin token (`JAVAKB_ADMIN_TOKENS`) opens a session: a random id (256 bits) goes
to the browser, and Redis keeps, under the id's sha256 and for `SESSION_TTL_S`, the digest of the admin
token it was opened with. A session is an admin's while that digest is still one of the configured
admin tokens: removing a token from the settings ends every session opened with it. Signing out
deletes the key. Nothing in the cookie can be forged or read: it names a key, and says nothing.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence

from arq.connections import ArqRedis

from app.core.access_settings import AdminToken
from app.jobs.redis import drop_value, get_value, put_value

SESSION_TTL_S = 8 * 3600  # a working day; sign in again after it
COOKIE = "javakb_admin"
_ID = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)


def _key(prefix: str, session_id: str) -> str:
    return f"{prefix}:admin-session:{hashlib.sha256(session_id.encode()).hexdigest()}"


async def open_session(queue: ArqRedis, prefix: str, admin: AdminToken) -> str:
    """A new session for `admin` (the entry its token matched); its id, for the cookie."""
    session_id = secrets.token_urlsafe(32)
    await put_value(queue, _key(prefix, session_id), admin.sha256, SESSION_TTL_S)
    return session_id


async def session_admin(
    queue: ArqRedis, prefix: str, session_id: str | None, admins: Sequence[AdminToken]
) -> AdminToken | None:
    """The admin token entry a live session was opened with, or None (no, unknown, expired or revoked session)."""
    if not session_id or not _ID.fullmatch(session_id):
        return None  # never a Redis round trip for what no session id looks like
    digest = await get_value(queue, _key(prefix, session_id))
    return next((a for a in admins if digest is not None and secrets.compare_digest(a.sha256, digest)), None)


async def close_session(queue: ArqRedis, prefix: str, session_id: str | None) -> None:
    """Forget the session (signing out); an unknown id is fine."""
    if session_id and _ID.fullmatch(session_id):
        await drop_value(queue, _key(prefix, session_id))
