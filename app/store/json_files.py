"""The Edge store's small JSON files (the alias file, each generation's model record), written whole or not at all.

Every search asks which generation the alias points at. Reading the alias file each time cost a file open, a read
and a parse (0.1-0.4 ms on the loaded machine, two or three times a search: docs/performance.md), so
`StampedJson` keeps the parsed file and reads it again only when its stat (inode, size, modification time) is not
the one it was read at: a write by this process (`forget`) or by another one (a file replaced by `write_json` is a
new file) is seen at the next read. Two replacements by another process within one tick of the file system's clock,
of the same size, the second reusing the first one's freed inode, would look alike; another process does not write
the alias while a store has it open (opening the generation it points at is refused by the shard's lock).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.errors import StorageError

Stamp = tuple[int, int, int]


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file's value; None when the file is missing or holds no object.

    Raises:
        StorageError: the file cannot be read or is not JSON.
    """
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StorageError(f"reading {path} failed: {exc}") from exc
    return loaded if isinstance(loaded, dict) else None


def write_json(path: Path, value: Mapping[str, Any]) -> None:
    """Write a small JSON file whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(value, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def stamp_of(path: Path) -> Stamp | None:
    """What tells one version of a file from another: its inode, size and modification time (None: no file)."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"reading {path} failed: {exc}") from exc
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


class StampedJson:
    """A JSON object file read again only when its `stamp_of` changed since the last read, or after `forget`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: Stamp | None = None
        self._value: dict[str, Any] | None = None

    def read(self) -> Mapping[str, Any] | None:
        """The file's value as `read_json` gives it (read-only: the same object until the file changes)."""
        stamp = stamp_of(self.path)
        if stamp is None:
            self.forget()
            return None
        if stamp != self._stamp:
            # Stamped before reading: a file replaced in between is read again at the next call.
            self._value, self._stamp = read_json(self.path), stamp
        return self._value

    def forget(self) -> None:
        """Read the file again at the next `read` (this process wrote it)."""
        self._stamp, self._value = None, None
