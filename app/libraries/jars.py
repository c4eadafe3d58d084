"""The Java files of a sources jar (a zip), read from its bytes: pure, bounded, never trusting the archive.

Entries are read in name order; only `.java` files outside `META-INF/`, at most `max_file_bytes`
each (by their real size, not the header's), `max_total` in all and `max_files` of them, so a zip
bomb or a jar of 20,000 one-line classes (issue 24) costs no more than its limits; where reading
stopped early, `cut` says why. A jar that is not a readable zip is reported, not raised.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class JarFiles:
    """The Java files read from a jar, and what was left out."""

    files: tuple[tuple[str, bytes], ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (entry, why)
    problem: str | None = None  # why the jar could not be read at all
    cut: str | None = None  # why reading stopped before the last Java file (a limit)


def java_files(data: bytes, *, max_file_bytes: int, max_total: int, max_files: int) -> JarFiles:
    """Every `.java` entry of a jar as (path, bytes), within the limits."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        return JarFiles(files=(), problem=f"not a readable jar: {exc}")
    files: list[tuple[str, bytes]] = []
    skipped: list[tuple[str, str]] = []
    total = 0
    cut: str | None = None
    with archive:
        for info in _java_entries(archive):
            if len(files) >= max_files:
                cut = f"the first {max_files} Java files read (JAVAKB_LIBRARIES__MAX_JAR_ENTRIES)"
                break
            try:
                with archive.open(info) as handle:
                    content = handle.read(max_file_bytes + 1)
            except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
                skipped.append((info.filename, f"unreadable entry: {exc}"))
                continue
            if len(content) > max_file_bytes:
                skipped.append((info.filename, f"over {max_file_bytes} bytes"))
                continue
            total += len(content)
            if total > max_total:
                cut = f"the jar's Java files are over {max_total} bytes in all (4 x JAVAKB_LIBRARIES__MAX_JAR_BYTES)"
                skipped.append((info.filename, cut))
                break
            files.append((info.filename, content))
    return JarFiles(files=tuple(files), skipped=tuple(skipped), cut=cut)


def _java_entries(archive: zipfile.ZipFile) -> Iterator[zipfile.ZipInfo]:
    for info in sorted(archive.infolist(), key=lambda i: i.filename):
        name = info.filename
        if info.is_dir() or not name.endswith(".java") or name.startswith(("META-INF/", "/")) or ".." in name:
            continue
        yield info
