"""What a standalone `javakb index` indexed, for the next `javakb serve` to record as local projects (issue 27).

A `javakb index` with no `javakb serve` running writes the embedded store only: it does not open
PostgreSQL (docs/decisions.md, "A standalone index is recorded by the next serve"). It notes each
repository it indexed in `indexed-here.json`, in the store's folder beside `serve`'s socket: the
repository path, its working tree (absolute), when, what it wrote, and `recorded: false`.

At start `javakb serve` (`record_indexed_here`) makes each noted repository whose run is not recorded yet,
or that PostgreSQL does not know (a new database), a local project through the same path a watched
checkout's run takes (`sync_local` -> `index_local`: its run, manifest, dependencies and state; an
incremental pass, nothing embedded again), then marks it `recorded`. A working tree that moved or vanished
makes the project `failed` with the reason (`sync_local`). The file is small (one entry a repository) and
rewritten whole through a temporary file, so a reader never sees half of it.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from app.core.errors import ServiceError
from app.core.settings import QdrantSettings
from app.core.states import SyncTrigger
from app.runtime import Deps
from app.sync.local_project import sync_local

logger = logging.getLogger(__name__)

FILE_NAME: Final = "indexed-here.json"


def notes_path(settings: QdrantSettings) -> Path | None:
    """The notes of an embedded store on disk (None for a server or a `:memory:` store: nothing to note)."""
    if settings.url or settings.path == ":memory:":
        return None
    return Path(settings.path).resolve() / FILE_NAME


def read_notes(path: Path) -> dict[str, dict[str, Any]]:
    """The notes by repository path; none when the file is missing or unreadable (logged: a note is not vital)."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("%s: unreadable, ignored: %s", path, exc)
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {repo: note for repo, note in loaded.items() if isinstance(note, dict) and isinstance(note.get("root"), str)}


def _write_notes(path: Path, notes: Mapping[str, Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".indexed-here.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(notes, out, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def note_indexed(
    settings: QdrantSettings, repo_path: str, root: Path, counts: Mapping[str, Any], *, alone: bool = False
) -> None:
    """Note a standalone index of `root` as `repo_path` (the last one wins: the store holds its points).

    `alone`: the store now holds this repository only (`--rebuild --drop-other-repos`): the others' notes go.
    """
    path = notes_path(settings)
    if path is None:
        return
    notes = {} if alone else read_notes(path)
    notes[repo_path] = {
        "root": str(root.resolve()),
        "indexed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": counts.get("files", 0),
        "chunks": counts.get("embedded", 0) + counts.get("reused", 0),
        "recorded": False,
    }
    try:
        _write_notes(path, notes)
    except OSError as exc:  # the index is written; only its record by the next serve is lost
        logger.warning("%s: not written (the next serve will not record %s): %s", path, repo_path, exc)


async def record_indexed_here(deps: Deps) -> list[str]:
    """Record every noted repository not recorded yet (or unknown to PostgreSQL) as a local project.

    Returns the repository paths recorded. A run that fails (the store, the embedder) leaves its note
    for the next start; the others are marked `recorded`.
    """
    path, db = notes_path(deps.settings.qdrant), deps.db
    if path is None or db is None:
        return []
    notes = read_notes(path)
    known = {p.repo_path for p in await db.local_projects()}
    done: list[str] = []
    for repo_path, note in sorted(notes.items()):
        if note.get("recorded") and repo_path in known:
            continue
        project = await db.local_project(repo_path, note["root"])
        try:
            said = await sync_local(deps, project, SyncTrigger.LOCAL)
        except ServiceError as exc:
            logger.warning("recording %s indexed by javakb index failed, next start again: %s", repo_path, exc)
            continue
        logger.info("recorded %s indexed by javakb index: %s", repo_path, said)
        done.append(repo_path)
    if done:
        current = read_notes(path)  # nothing else writes it while serve runs (the CLI asks serve), but re-read
        for repo_path in done:
            if repo_path in current and current[repo_path]["root"] == notes[repo_path]["root"]:
                current[repo_path]["recorded"] = True
        try:
            _write_notes(path, current)
        except OSError as exc:
            logger.warning("%s: not written (recorded again at the next start): %s", path, exc)
    return done
