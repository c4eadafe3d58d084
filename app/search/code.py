"""`read_code` (issue 28): a file's lines at the indexed commit, with its symbols outlined, capped and paged.

The file is found through the index only (`lookups.outline`, the caller's `Access` inside the query):
a file in a repository the caller may not read answers exactly as one that does not exist (`None`).
Its chunks give the GitLab project, the indexed commit and the outline. The lines then come:

- from the index when it holds every line of the range asked for (an explicit `end`);
- else from GitLab at that commit (`FileSource`, given by the interface: the caller's own GitLab token
  when it holds one, else the service's token once the index showed the caller may read the file);
- else (no GitLab, GitLab refusing, a file too large) from the index, with gaps.

A member's chunk (method, constructor, part of a method) holds its lines verbatim, Javadoc included; a
type's chunk is a skeleton with bodies elided, so lines outside every member (imports, fields, the class
line) are not held and come back as `None` (a gap).

A call shows at most `MAX_LINES` lines from `start`; `next_start` pages on. Every line is indexed
text, untrusted: the interfaces fence it (`app.search.untrusted.fence_for`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from typing_extensions import TypedDict

from app.auth.access import Access
from app.core.errors import PayloadError
from app.search import lookups
from app.search.hits import Hit
from app.search.reader import Reader
from pipeline.model import TYPE_SYMBOLS, ChunkerConfig
from pipeline.source import Decoded, decode_source

MAX_LINES = 400
"""Lines one call shows at most; `next_start` asks for the next ones."""

MAX_LINE_CHARS = 1000
"""Characters of one line shown; a longer line (minified or generated code) is cut and says so."""

MAX_FILE_BYTES = 2 * 1024 * 1024
"""A file read from GitLab larger than this is not read (its indexed lines are shown instead)."""

MAX_PATH_CHARS = 1024

CUT = " [line cut]"

FileSource = Callable[[int, str, str], Awaitable[bytes | None]]
"""A file's bytes by GitLab project id, path and commit; None when the caller may not read it or it is not there."""

Origin = Literal["gitlab", "index"]


class BadPathError(PayloadError):
    """A path that cannot name a file of a repository (`..`, absolute, control characters)."""


@dataclass(frozen=True, slots=True)
class Symbol:
    """One declaration of the file: its span, kind and signature."""

    line_start: int
    line_end: int
    symbol_type: str
    qualified_name: str
    signature: str


@dataclass(frozen=True, slots=True)
class CodeLines:
    """A page of a file's lines: `lines[i]` is line `start + i`, None where neither GitLab nor the index holds it."""

    repo_path: str
    file_path: str
    project_id: int | None
    commit_sha: str | None
    origin: Origin
    start: int
    lines: tuple[str | None, ...]
    total_lines: int | None  # the file's lines (None: read from the index, whose last line is not the file's)
    next_start: int | None
    symbols: tuple[Symbol, ...]
    permalink: str | None

    @property
    def end(self) -> int:
        """The last line of the page (`start - 1` for an empty page)."""
        return self.start + len(self.lines) - 1


def clean_path(path: str) -> str:
    """The path as a repository names its files, or `BadPathError` (`..`, absolute, backslash, control characters)."""
    stripped = path.strip()
    if not stripped or len(stripped) > MAX_PATH_CHARS:
        raise BadPathError(f"a file path of 1 to {MAX_PATH_CHARS} characters")
    if any(ord(c) < 32 or c in "\\\x7f" for c in stripped):
        raise BadPathError("a file path without backslashes or control characters")
    if stripped.startswith("/") or any(part in ("..", ".") for part in stripped.split("/")):
        raise BadPathError("a file path relative to the repository root, without '.' or '..' segments")
    return posixpath.normpath(stripped)


def line_range(start: int | None, end: int | None) -> tuple[int, int]:
    """The first line and the last line asked for, at most `MAX_LINES` of them (`BadPathError`-like refusals)."""
    first = 1 if start is None else start
    if first < 1:
        raise PayloadError("start_line counts from 1")
    if end is not None and end < first:
        raise PayloadError("end_line is before start_line")
    last = first + MAX_LINES - 1 if end is None else min(end, first + MAX_LINES - 1)
    return first, last


async def read_code(
    reader: Reader,
    access: Access,
    repo: str,
    path: str,
    start: int | None = None,
    end: int | None = None,
    source: FileSource | None = None,
) -> CodeLines | None:
    """Lines `start..end` (at most `MAX_LINES`) of an indexed file the caller may read.

    None when the caller may not read it, or it is not indexed: the same answer.

    Raises:
        BadPathError: the path cannot name a file of a repository.
        PayloadError: the range is impossible.
        GitLabUnavailableError: `source` could not reach GitLab.
    """
    file_path = clean_path(path)
    first, last = line_range(start, end)
    chunks = await lookups.outline(reader, access, repo, file_path)
    if not chunks:
        return None
    anchor = chunks[0]
    project_id, sha = anchor.chunk.gitlab_project_id, anchor.commit_sha
    held = indexed_lines(chunks)
    whole = end is not None and all(n in held for n in range(first, last + 1))  # the index holds the range asked
    raw = None
    if source is not None and project_id is not None and sha and not whole:
        raw = await source(project_id, file_path, sha)
    text = _decoded(raw, file_path) if raw is not None else None
    if text is not None:
        every = text.splitlines()
        shown: tuple[str | None, ...] = tuple(_capped(line) for line in every[first - 1 : last])
        more = last < len(every)
        origin: Origin = "gitlab"
        total: int | None = len(every)
    else:
        known_end = max(held, default=0)
        top = min(last, known_end)
        shown = tuple(_capped(held[n]) if n in held else None for n in range(first, top + 1))
        more = last < known_end
        origin, total = "index", None
    symbols = outlined(chunks, first, first + len(shown) - 1)
    link = None
    if anchor.permalink and shown:
        link = anchor.permalink.split("#", 1)[0] + f"#L{first}-{first + len(shown) - 1}"
    return CodeLines(
        repo_path=anchor.repo_path,
        file_path=anchor.file_path,
        project_id=project_id,
        commit_sha=sha,
        origin=origin,
        start=first,
        lines=shown,
        total_lines=total,
        next_start=last + 1 if more else None,
        symbols=symbols,
        permalink=link,
    )


def indexed_lines(chunks: Sequence[Hit]) -> dict[int, str]:
    """The lines the index holds verbatim: every member's chunk, by line number (types' skeletons are not verbatim)."""
    held: dict[int, str] = {}
    for hit in chunks:
        if hit.symbol_type in TYPE_SYMBOLS:
            continue
        for offset, line in enumerate(hit.code.splitlines()):
            held.setdefault(hit.line_start + offset, line)
    return held


def _decoded(raw: bytes, file_path: str) -> str | None:
    decoded = decode_source(raw, file_path, ChunkerConfig(max_file_bytes=MAX_FILE_BYTES))
    return decoded.data.decode("utf-8") if isinstance(decoded, Decoded) else None


def _capped(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + CUT


def outlined(chunks: Sequence[Hit], first: int, last: int) -> tuple[Symbol, ...]:
    """The file's declarations that overlap lines `first..last`, in line order; a split method's parts as one."""
    spans: dict[tuple[str, str], Symbol] = {}
    for hit in chunks:
        key = (hit.qualified_name, hit.signature)
        known = spans.get(key)
        start = hit.line_start if known is None else min(known.line_start, hit.line_start)
        end = hit.line_end if known is None else max(known.line_end, hit.line_end)
        spans[key] = Symbol(start, end, hit.symbol_type.value, hit.qualified_name, hit.signature)
        if hit.chunk.part_count > 1:
            spans[key] = Symbol(start, end, "method", hit.qualified_name, hit.signature)
    shown = [s for s in spans.values() if s.line_start <= last and s.line_end >= first]
    return tuple(sorted(shown, key=lambda s: (s.line_start, -s.line_end)))


class CodeSymbol(TypedDict):
    """A declaration the shown lines hold (a split method as one)."""

    line_start: int
    line_end: int
    symbol_type: str
    qualified_name: str
    signature: str


class CodeItem(TypedDict):
    """`read_code`: a page of a file's lines at the indexed commit.

    `lines[i]` is line `start_line + i`, null where neither GitLab nor the index holds it; `next_start` asks
    for the next page.
    """

    repo_path: str
    file_path: str
    project_id: int | None
    commit_sha: str | None
    origin: str
    start_line: int
    end_line: int
    total_lines: int | None
    next_start: int | None
    permalink: str | None
    lines: list[str | None]
    results: list[CodeSymbol]  # the declarations the shown lines hold


def code_item(found: CodeLines) -> CodeItem:
    """The page as data (the MCP tool's structured content, `GET /api/v1/code`'s body)."""
    return {
        "repo_path": found.repo_path,
        "file_path": found.file_path,
        "project_id": found.project_id,
        "commit_sha": found.commit_sha,
        "origin": found.origin,
        "start_line": found.start,
        "end_line": found.end,
        "total_lines": found.total_lines,
        "next_start": found.next_start,
        "permalink": found.permalink,
        "lines": list(found.lines),
        "results": [
            {"line_start": s.line_start, "line_end": s.line_end, "symbol_type": s.symbol_type,
             "qualified_name": s.qualified_name, "signature": s.signature}
            for s in found.symbols
        ],
    }  # fmt: skip
