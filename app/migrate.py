"""Apply the SQL migrations in `migrations/` with yoyo (under yoyo's lock, so concurrent starts are safe)."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from yoyo import get_backend, read_migrations

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


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


def apply_migrations(dsn: str, directory: Path = MIGRATIONS_DIR) -> int:
    """Apply pending migrations (creating the database if needed); return how many. Blocking."""
    ensure_database(dsn)
    backend = get_backend(yoyo_url(dsn))
    migrations = read_migrations(str(directory))
    try:
        with backend.lock():
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
    finally:
        backend.connection.close()  # yoyo keeps its connection open otherwise
    logger.info("applied %d migrations", len(pending))
    return len(pending)
