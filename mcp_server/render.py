"""Agent-facing rendering of answers: compact text within a character budget, plus the same as data.

Every list answer is a page: it starts at `offset`, cuts whole entries (never mid-line) when the
budget is spent, and says how many of how many were shown and the `offset` that gets the rest, in
the text and as `next_offset` in the data. Set answers (who carries, calls, injects, implements)
show one line per member with its citation and the code of only the first few members, so a
typical set fits the default budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from app.search.hits import Hit
from app.search.results import excerpt, hit_block, hit_item, hit_line

DEFAULT_BUDGET = 12_000
DEFAULT_EXCERPT_LINES = 30
SET_CODE_FIRST = 3
"""Members of a set answer shown with code by default; the others with their citation only."""
ECHO_CHARS = 120
"""At most this much of a caller's input is echoed back, so an answer never grows with the input."""


class Entry(NamedTuple):
    """One entry of a page: its text, its data, and what joins it to the entry before (a blank line by default)."""

    text: str
    item: Any
    joiner: str = "\n\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """One page of an answer: text for the model, the same entries as data, and where the rest starts."""

    text: str
    items: list[Any]
    total: int
    offset: int
    next_offset: int | None

    @property
    def omitted(self) -> int:
        """Entries after this page (the ones before `offset` were asked away)."""
        return max(0, self.total - self.offset - len(self.items))

    def data(self, **extra: Any) -> dict[str, Any]:
        """The structured content: every tool's entries under `results`, with the page's counts."""
        page = {"total": self.total, "offset": self.offset, "omitted": self.omitted, "next_offset": self.next_offset}
        return {"results": self.items, **page, **extra}


def echo(text: str, limit: int = ECHO_CHARS) -> str:
    """User input as shown back in a header or an error, cut to `limit` characters."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class Note(NamedTuple):
    """What an answer adds to one hit: lines after its citation, and keys of its item."""

    lines: tuple[str, ...]
    item: dict[str, Any]


def render_hits(
    hits: Sequence[Hit], *, budget: int = DEFAULT_BUDGET, excerpt_lines: int | None = DEFAULT_EXCERPT_LINES,
    header: str = "", offset: int = 0, code_first: int | None = None, notes: Sequence[Note] | None = None,
) -> Rendered:  # fmt: skip
    """Hits from `offset` on, until the budget is spent; `excerpt_lines=None` shows whole code.

    `code_first=None` shows every hit with its code; `code_first=k` only the first k of the page, the
    others as one citation line each (set answers). `notes`, one per hit, add lines and item keys.
    """
    window = (hits[i] for i in range(offset, len(hits)))  # read one at a time, as the page takes them
    return render_window(
        window, total=len(hits), budget=budget, excerpt_lines=excerpt_lines, header=header, offset=offset,
        code_first=code_first, notes=None if notes is None else notes[offset:],
    )  # fmt: skip


def render_window(
    window: Iterable[Hit], *, total: int, budget: int, excerpt_lines: int | None, header: str, offset: int,
    code_first: int | None, notes: Sequence[Note] | None = None,
) -> Rendered:  # fmt: skip
    """`render_hits` of an answer of `total` hits given only those from `offset` on (`window`, `notes`).

    A window of `most_shown` hits gives the same page as all of them: a set answer parses the payloads
    of only those (`find_by_annotation`).
    """
    entries = _hit_entries(window, offset, excerpt_lines, code_first)
    return page(
        entries if notes is None else _noted(entries, notes),
        total=total,
        offset=offset,
        budget=budget,
        header=header,
    )


def most_shown(floors: Iterable[int], budget: int) -> int:
    """At most how many entries a page shows, given a lower bound of each one's length (`place_floor`).

    The first entry is always shown; a later one only when the text up to it fits the budget, so
    the bounds up to it add up to at most the budget.
    """
    shown = used = 0
    for floor in floors:
        used += floor
        if shown and used > budget:
            break
        shown += 1
    return shown


def _hit_entries(
    window: Iterable[Hit], offset: int, excerpt_lines: int | None, code_first: int | None
) -> Iterator[Entry]:
    """The entries of the hits of `window` (the first is at `offset`), made one at a time.

    A page takes only the entries that fit its budget, and a set answer may have 500 members: the others
    are never rendered.
    """
    for index, hit in enumerate(window):
        rank = offset + index + 1
        if code_first is not None and index >= code_first:  # one line each, no blank line between two of them
            yield Entry(hit_line(rank, hit), hit_item(hit), "\n" if index > code_first else "\n\n")
            continue
        code = hit.code if excerpt_lines is None else excerpt(hit.code, excerpt_lines)
        yield Entry(hit_block(rank, hit, code), hit_item(hit, code=code))


def _noted(entries: Iterable[Entry], notes: Sequence[Note]) -> Iterator[Entry]:
    for (text, item, joiner), note in zip(entries, notes, strict=False):
        lines = "".join(f"\n   {line}" for line in note.lines)
        head, fence, code = text.partition("\n```")  # the lines go with the citation, before the code
        yield Entry(head + lines + fence + code, {**item, **note.item}, joiner)


def page(entries: Iterable[Entry], *, total: int, offset: int, budget: int, header: str = "") -> Rendered:
    """The entries of the page that starts at `offset` (`entries` begins there), as many as fit the budget.

    An entry goes in only if it fits together with the note that would follow it, so the text stays
    within the budget. The one exception is the first entry: an answer beats an empty reply, so it
    is shown whole even when it alone is over budget, followed by the shortest note.
    """
    text = header
    items: list[Any] = []
    short = False
    for index, (entry, item, joiner) in enumerate(entries):
        added = (joiner if text else "") + entry
        shown = offset + index + 1
        reserve = len(_NOTE_JOINER) + len(_left_out_note(offset, shown, total)) if shown < total else 0
        if len(text) + len(added) + reserve > budget and items:
            break
        if len(text) + len(added) + reserve > budget:
            short = True
        text += added
        items.append(item)
    end = offset + len(items)
    next_offset = end if end < total else None
    note = None
    if next_offset is not None:
        note = f"[+{total - end} more: offset={end}]" if short else _left_out_note(offset, end, total)
    elif not items:
        note = "No results." if total == 0 else f"No results at offset {offset}: there are {total}."
    if note is not None:
        text += (_NOTE_JOINER if text else "") + note
    return Rendered(text=text, items=items, total=total, offset=offset, next_offset=next_offset)


_NOTE_JOINER = "\n\n"


def _left_out_note(offset: int, end: int, total: int) -> str:
    return (
        f"[Shown {offset + 1}-{end} of {total}: {total - end} more left out by the output budget. "
        f"Call again with offset={end} for the rest, or raise max_chars.]"
    )
