"""Exact and pattern search over the indexed code, as `git grep` gives it (issue 28): lines, not ranked chunks.

The text is the chunks' own: a chunk's payload holds its `code` (docs/decisions.md, "Exact and pattern
search"). `grep_code` scrolls the points the caller's filter selects (its access, the repository, the
path's folder and the language, one Qdrant filter: `Reader.where`), reading only `GREP_FIELDS`, and
matches each chunk's code with the RE2 pattern (`app.search.patterns`) off the event loop, a batch at a
time. So a project the caller may not read is never read: not its text, not its lines, not its count.
When the pattern requires a literal (`required_literal`), the filter also asks for chunks whose code
contains it (`filters.contains`): the engine then reads only those payloads out; one that does not know
the condition refuses it, and the scan runs without it.

Lines: a member's chunk (method, constructor, a long method's part) is its source lines verbatim, from
`line_start`, so a match there is `file:line` exactly. A type's chunk is its outline (`pipeline.skeleton`:
declaration, fields, constants, member heads with bodies elided), not verbatim: a match there is reported
at the type's first line with `in_outline` set; an outline line whose member has a chunk of its own
(a body elided as `{ ... }`, or a head that member's chunk also matched) is left out, so one source
line counts once. Context lines come from the same chunk and stop at its ends.

Bounds: the pattern's (`compile_pattern`), then the scan's (`GrepLimits`): the bytes of code read, the
matching lines kept, and a deadline. A scan that reaches one stops and says so (`complete` false,
`stopped` why): its `total` is then a floor. Otherwise every count is exact.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from typing_extensions import TypedDict

from app.auth.access import Access
from app.core.errors import StorageError
from app.search.patterns import LinePattern, PatternSpec, compile_pattern, required_literal, squashed
from app.search.reader import Reader
from app.search.scoping import Filters
from app.search.untrusted import fence_for
from app.store.filters import Condition, Filter, contains, eq, everything
from app.store.payloads import read_fields
from pipeline.model import TYPE_SYMBOLS
from pipeline.scope import glob_to_regex

logger = logging.getLogger(__name__)

GREP_FIELDS: Final = (
    "code",
    "repo_path",
    "file_path",
    "line_start",
    "line_end",
    "qualified_name",
    "symbol_type",
    "gitlab_project_id",
    "commit_sha",
)
"""What a scan reads of each point: the code and what a match cites."""
MAX_CONTEXT = 10
MAX_LINE_CHARS = 400  # a longer line (minified, generated) is cut in answers, never in matching
_ELIDED = "{ ... }"  # `pipeline.skeleton`'s elided body
_WILDCARDS = frozenset("*?")


@dataclass(frozen=True, slots=True)
class GrepLimits:
    """How far one scan goes: bytes of code read, matching lines kept, seconds; then it stops and says so."""

    max_scan_bytes: int = 512 << 20
    max_matches: int = 10_000
    deadline_s: float = 10.0
    batch: int = 512  # points matched per trip off the event loop


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepQuery:
    """A pattern and where to look: a repository (or group prefix ending in '/'), a path, a language.

    `path` is a folder or file prefix, or a glob (`*`, `?`, `**` spanning folders) on the repository-relative
    path; a glob without '/' matches the file name at any depth (`*Controller.java`).
    """

    pattern: PatternSpec
    repo: str | None = None
    path: str | None = None
    language: str | None = None
    context: int = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepMatch:
    """One matching line, cited: where, its text and context, and the symbol (chunk) around it."""

    repo_path: str
    file_path: str
    line: int
    text: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    symbol: str
    symbol_type: str
    symbol_lines: tuple[int, int]
    in_outline: bool
    project_id: int | None
    commit_sha: str | None
    permalink: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepResult:
    """A page of matching lines in file order, and the whole answer's counts (exact when `complete`)."""

    matches: list[GrepMatch]
    total: int
    files: int
    offset: int
    complete: bool
    stopped: str | None
    scanned_chunks: int


@dataclass(slots=True)
class _Found:
    """A chunk that matched: its cited fields, its lines and which of them matched."""

    fields: tuple[Any, ...]  # GREP_FIELDS' values but the code
    lines: list[str]
    hits: list[int]

    @property
    def outline(self) -> bool:
        return self.fields[5] in TYPE_SYMBOLS


@dataclass(slots=True)
class _Scan:
    """The scan's state: fed batches of payloads off the event loop, it keeps the chunks that matched."""

    pattern: LinePattern
    in_path: Callable[[str], bool]
    limits: GrepLimits
    found: list[_Found] = field(default_factory=list)
    scanned_bytes: int = 0
    scanned_chunks: int = 0
    matching_lines: int = 0
    stopped: str | None = None

    def feed(self, payloads: Sequence[Mapping[str, Any]]) -> None:
        for payload in payloads:
            if self.stopped:
                return
            values = read_fields(payload, GREP_FIELDS)
            if not self.in_path(values[2]):
                continue
            code: bytes = values[0].encode()
            self.scanned_chunks += 1
            self.scanned_bytes += len(code)
            if self.scanned_bytes > self.limits.max_scan_bytes:
                self.stopped = f"read {self.limits.max_scan_bytes:,} bytes of code"
                return
            if not self.pattern.matches(code):
                continue
            raw = code.split(b"\n")
            hits = self.pattern.lines(raw)
            self.found.append(_Found(values[1:], [line.decode(errors="replace") for line in raw], hits))
            self.matching_lines += len(hits)
            if self.matching_lines > self.limits.max_matches:
                self.stopped = f"found over {self.limits.max_matches} matching lines"


def path_rule(path: str | None) -> tuple[str | None, Callable[[str], bool]]:
    """A path argument as the folder or file the query filters by, and the test each file path must pass.

    A prefix is all filter (`Filters.path_prefix`); a glob's folders before its first wildcard are the
    filter, and the glob itself is tested on each path read.
    """
    if not path or not path.strip("/"):
        return None, _anywhere
    path = path.strip("/")
    if not _WILDCARDS & set(path):
        return path, _anywhere
    parts = path.split("/")
    fixed = []
    for part in parts[:-1]:
        if _WILDCARDS & set(part):
            break
        fixed.append(part)
    glob = path if "/" in path else "**/" + path
    test = glob_to_regex(glob).match
    return ("/".join(fixed) or None), lambda file_path: test(file_path) is not None


def _anywhere(_: str) -> bool:
    return True


async def grep_code(
    reader: Reader,
    access: Access,
    query: GrepQuery,
    *,
    offset: int = 0,
    limit: int = 20,
    limits: GrepLimits = GrepLimits(),
    clock: Callable[[], float] = time.monotonic,
) -> GrepResult:
    """The matching lines from `offset` (at most `limit`) of what the caller may read, and their counts.

    Raises:
        PatternError: the pattern is refused (`app.search.patterns.compile_pattern`).
    """
    pattern = await reader.offload(lambda: compile_pattern(query.pattern))
    literal = required_literal(query.pattern)
    folder, in_path = path_rule(query.path)
    filters = Filters(repo=query.repo, path_prefix=folder)
    extra: list[Condition] = [eq("language", query.language.lower())] if query.language else []
    narrowed = [*extra, contains("code", literal)] if literal else extra
    where = await reader.where(access, filters, *narrowed) or everything()
    try:
        scan = await _scanned(reader, where, _Scan(pattern, in_path, limits), clock)
    except StorageError:
        if literal is None:
            raise
        # An engine without `match.substring` (a Qdrant server before it) refuses the query: scan without it.
        logger.info("the store refused a substring condition; exact search scans every chunk in scope")
        where = await reader.where(access, filters, *extra) or everything()
        scan = await _scanned(reader, where, _Scan(pattern, in_path, limits), clock)
    context = max(0, min(query.context, MAX_CONTEXT))
    return await reader.offload(lambda: _answer(scan, offset, limit, context, reader.gitlab_url))


async def _scanned(reader: Reader, where: Filter, scan: _Scan, clock: Callable[[], float]) -> _Scan:
    """`scan` fed with the code of every point `where` selects, a batch a trip off the loop, until a limit."""
    limits = scan.limits
    deadline = clock() + limits.deadline_s
    batch: list[Mapping[str, Any]] = []
    async for record in reader.store.scroll(where, GREP_FIELDS, page=1024):
        batch.append(record.payload or {})
        if len(batch) < limits.batch:
            continue
        await reader.offload(functools.partial(scan.feed, batch))
        batch = []
        if not scan.stopped and clock() > deadline:
            scan.stopped = f"ran {limits.deadline_s:g} s"
        if scan.stopped:
            break  # as `collected` does: the scroll's generator is closed when it is collected
    if batch and not scan.stopped:
        await reader.offload(functools.partial(scan.feed, batch))
    return scan


def _answer(scan: _Scan, offset: int, limit: int, context: int, gitlab_url: str | None) -> GrepResult:
    places = _placed(scan.found)
    files = len({(found.fields[0], found.fields[1]) for found, _ in places})
    page = [_match(found, index, context, gitlab_url) for found, index in places[offset : offset + max(0, limit)]]
    return GrepResult(
        matches=page,
        total=len(places),
        files=files,
        offset=offset,
        complete=scan.stopped is None,
        stopped=scan.stopped,
        scanned_chunks=scan.scanned_chunks,
    )


def _placed(found: list[_Found]) -> list[tuple[_Found, int]]:
    """Every matching line once, in file order: a member's verbatim lines, then what only an outline has."""
    seen: set[tuple[str, str, int]] = set()
    verbatim: dict[tuple[str, str], set[str]] = {}
    places: list[tuple[tuple[Any, ...], _Found, int]] = []
    for chunk in found:
        if chunk.outline:
            continue
        repo, path, start = chunk.fields[0], chunk.fields[1], chunk.fields[2]
        for index in chunk.hits:
            key = (repo, path, start + index)
            if key in seen:  # a line two parts of a long method share
                continue
            seen.add(key)
            verbatim.setdefault((repo, path), set()).add(squashed(chunk.lines[index]))
            places.append(((repo, path, start + index, 0, index), chunk, index))
    for chunk in found:
        if not chunk.outline:
            continue
        repo, path, start = chunk.fields[0], chunk.fields[1], chunk.fields[2]
        known = verbatim.get((repo, path), set())
        for index in chunk.hits:
            line = chunk.lines[index].rstrip()
            if line.endswith(_ELIDED) or squashed(line) in known:
                continue
            places.append(((repo, path, start, 1, index), chunk, index))
    places.sort(key=lambda place: place[0])
    return [(chunk, index) for _, chunk, index in places]


def _match(found: _Found, index: int, context: int, gitlab_url: str | None) -> GrepMatch:
    repo, path, start, end, symbol, symbol_type, project_id, commit = found.fields
    line = start if found.outline else start + index
    link = f"{gitlab_url}/{repo}/-/blob/{commit}/{path}#L{line}" if gitlab_url and commit else None
    lines = found.lines
    return GrepMatch(
        repo_path=repo,
        file_path=path,
        line=line,
        text=_cut(lines[index]),
        before=tuple(_cut(t) for t in lines[max(0, index - context) : index]),
        after=tuple(_cut(t) for t in lines[index + 1 : index + 1 + context]),
        symbol=symbol,
        symbol_type=str(symbol_type),
        symbol_lines=(start, end),
        in_outline=found.outline,
        project_id=project_id,
        commit_sha=commit,
        permalink=link,
    )


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


class GrepItem(TypedDict):
    """One matching line as data (the REST answer's and the MCP tool's output schema are derived from it)."""

    repo_path: str
    file_path: str
    line: int
    text: str
    before: list[str]
    after: list[str]
    symbol: str
    symbol_type: str
    symbol_lines: list[int]
    in_outline: bool
    project_id: int | None
    commit_sha: str | None
    permalink: str | None


def grep_item(match: GrepMatch) -> GrepItem:
    """The structured form of a matching line."""
    return {
        "repo_path": match.repo_path,
        "file_path": match.file_path,
        "line": match.line,
        "text": match.text,
        "before": list(match.before),
        "after": list(match.after),
        "symbol": match.symbol,
        "symbol_type": match.symbol_type,
        "symbol_lines": list(match.symbol_lines),
        "in_outline": match.in_outline,
        "project_id": match.project_id,
        "commit_sha": match.commit_sha,
        "permalink": match.permalink,
    }


def grep_block(match: GrepMatch) -> str:
    """The text form: `repo:file:line` and the symbol, then the lines fenced (the match marked with `>`)."""
    where = "in the outline of" if match.in_outline else "in"
    head = f"{match.repo_path}:{match.file_path}:{match.line}  {where} {match.symbol} ({match.symbol_type})"
    first = match.line - len(match.before)
    shown = [*match.before, match.text, *match.after]
    if match.in_outline:
        body = "\n".join(("> " if i == len(match.before) else "  ") + t for i, t in enumerate(shown))
    else:
        width = len(str(first + len(shown)))
        body = "\n".join(
            f"{first + i:>{width}}{'>' if first + i == match.line else ':'} {t}" for i, t in enumerate(shown)
        )
    fence = fence_for(body)
    return f"{head}\n{fence}\n{body}\n{fence}"


def summary(result: GrepResult) -> str:
    """One line: how many lines in how many files, and whether the count is exact."""
    counted = f"{result.total} matching lines in {result.files} files"
    return counted if result.complete else f"at least {counted} (the scan stopped: it {result.stopped}; narrow it)"
