"""Apply the SQL migrations in `migrations/` with yoyo (under yoyo's lock, so concurrent starts are safe)."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from yoyo import get_backend, read_migrations

from app.core.errors import StorageError
from app.core.unreachable import unreachable

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def yoyo_url(dsn: str) -> str:
    """The DSN as yoyo wants it: its psycopg 3 backend is named `postgresql+psycopg`."""
    for prefix in ("postgresql://", "postgres://"):
        if dsn.startswith(prefix):
            return "postgresql+psycopg://" + dsn.removeprefix(prefix)
    return dsn


def ensure_database(dsn: str) -> bool:
    """Create the DSN's database when it does not exist yet (first start); True when it was created."""
    info = conninfo_to_dict(dsn)
    name = str(info.get("dbname") or "")
    if not name:
        return False
    maintenance = make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(maintenance, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists:
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    logger.info("created database %s", name)
    return True


def pending_migrations(dsn: str, directory: Path = MIGRATIONS_DIR) -> list[str] | None:
    """The ids of the migrations not applied yet, or None when the database does not exist. Blocking.

    Nothing is created or changed (`javakb doctor`).

    Raises:
        StorageError: PostgreSQL cannot be reached.
    """
    name = str(conninfo_to_dict(dsn).get("dbname") or "")
    try:
        with psycopg.connect(make_conninfo(dsn, dbname="postgres"), connect_timeout=5) as conn:
            if name and conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                return None
        backend = get_backend(yoyo_url(dsn))
    except psycopg.Error as exc:
        raise StorageError(f"cannot connect to PostgreSQL: {exc}") from exc
    try:
        return [m.id for m in backend.to_apply(read_migrations(str(directory)))]
    finally:
        backend.connection.close()


def target(dsn: str) -> str:
    """`host:port/dbname` of a DSN (URL or key=value), never its password."""
    info = conninfo_to_dict(dsn)
    return f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}/{info.get('dbname') or ''}"


def apply_migrations(dsn: str, directory: Path = MIGRATIONS_DIR) -> int:
    """Apply pending migrations (creating the database if needed); return how many. Blocking.

    Raises:
        StorageError: PostgreSQL cannot be reached (the message says where, and what to do).
    """
    try:
        ensure_database(dsn)
        backend = get_backend(yoyo_url(dsn))
    except psycopg.OperationalError as exc:
        raise StorageError(unreachable("PostgreSQL", "JAVAKB_POSTGRES__DSN", target(dsn), exc)) from exc
    migrations = read_migrations(str(directory))
    try:
        with backend.lock():
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
    finally:
        backend.connection.close()  # yoyo keeps its connection open otherwise
    logger.info("applied %d migrations", len(pending))
    return len(pending)
