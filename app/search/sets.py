"""Set answers paged by the store: the members of a lookup from an offset on, as many as a page shows.

A set (the chunks an annotation marks, a method's callers) can hold thousands of members; a page reads
the ids in `file_order` and only the payloads it shows (`window`), and parses only those into hits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from app.auth.access import Access
from app.search.hits import ORDER_FIELDS, Hit, Member, SetWindow
from app.search.lookups import callers_condition
from app.search.reader import Reader, collected
from app.search.scoping import EVERYWHERE, Filters, Where
from app.store.filters import Condition, Filter, everything
from app.store.payloads import FILE_ORDER, PAYLOAD_FIELDS, read_fields

WINDOW_READ = 32
"""Payloads a set page reads a call (`window`): about one page of one-line entries."""

WINDOW_IDS = 4 * WINDOW_READ
"""Ids a set page lists past its offset in its first call (doubled while the page needs more): a set shorter
than that is counted by its listing, with no `count` call (0.2 ms for 32 ids, 0.35 ms for 128; docs/performance.md)."""

SET_SCAN = 500
"""How many members past `offset` a set page scans where the store has no `file_order` for some point."""


async def by_annotation(
    reader: Reader,
    access: Access,
    annotation: str,
    where: Where = EVERYWHERE,
    limit: int = 200,
) -> list[Hit]:
    """Chunks carrying an annotation (by simple name): the first `limit` found, in file order."""
    found = await annotated(reader, access, annotation, where, limit)
    return hits_of(reader, found)


async def annotated(
    reader: Reader,
    access: Access,
    annotation: str,
    where: Where = EVERYWHERE,
    limit: int = 200,
) -> list[Member]:
    """`by_annotation`'s members, sorted by their order fields only; `hits_of` makes the shown ones hits.

    The scroll stops at `limit`: `@Override` alone marks 10,785 chunks of two JDK modules, and a page
    of an answer shows a few dozen of them. Edge reads a point's whole payload whichever fields are
    asked for (docs/performance.md), so the payloads come in one read; only the shown ones are parsed.
    """
    return await scanned(reader, await reader.where(access, _carrying(where, annotation)) or everything(), limit)


async def scanned(reader: Reader, where: Filter, limit: int) -> list[Member]:
    """The first `limit` points found matching `where`, as members sorted by their order fields."""
    records = await collected(reader.store.scroll(where, True, page=min(limit, 1024)), limit)

    def members() -> list[Member]:
        found = [Member(str(r.id), read_fields(r.payload or {}, ORDER_FIELDS), r.payload or {}) for r in records]
        found.sort(key=lambda m: m.order)  # stable: as `in_file_order` sorts the same members' hits
        return found

    return await reader.offload(members)


async def annotation_window(
    reader: Reader,
    access: Access,
    annotation: str,
    where: Where,
    offset: int,
    shows: Callable[[Sequence[Member]], int],
    *,
    scan: int = SET_SCAN,
) -> SetWindow:
    """The members of `by_annotation` from `offset` on that a page can show (`shows`: how many of some it does)."""
    return await window(reader, access, _carrying(where, annotation), None, offset, shows, scan=scan)


def _carrying(where: Where, annotation: str) -> Filters:
    """The filters of the chunks carrying `annotation` where `where` looks."""
    return dataclasses.replace(where.as_filters(), annotation=annotation)


async def callers_window(
    reader: Reader,
    access: Access,
    name: str,
    where: Where,
    offset: int,
    shows: Callable[[Sequence[Member]], int],
) -> SetWindow:
    """The members of `callers` from `offset` on that a page can show (`callers` for how they are found)."""
    condition = await callers_condition(reader, access, name, where.in_repo())
    if condition is None:
        return SetWindow(0, [], scanned=False)
    return await window(reader, access, where.as_filters(), condition, offset, shows)


async def window(
    reader: Reader,
    access: Access,
    filters: Filters,
    condition: Condition | None,
    offset: int,
    shows: Callable[[Sequence[Member]], int],
    *,
    scan: int = SET_SCAN,
    listing: int = WINDOW_IDS,
) -> SetWindow:
    """The points matching the filters (and `condition`) from `offset` on that a page can show, and their number.

    Paged by `file_order`'s range index: the members' ids come in order without a payload read (`listing`
    past the offset, doubled while the page needs more; when fewer come, they are the set and tell its size,
    else one `count` does), and only the window's payloads are read, `WINDOW_READ` at a time, until the page
    is full. Where some point has no `file_order` (written before it existed), the first `offset + scan`
    found are sorted instead and the answer says the scan stopped (docs/decisions.md).
    """
    extra = () if condition is None else (condition,)
    where = await reader.where(access, filters, *extra) or everything()
    if not await reader.all_keyed():
        members = await scanned(reader, where, offset + scan)
        rest = members[offset:]
        return SetWindow(len(members), rest[: shows(rest)], scanned=len(members) >= offset + scan)
    asked = offset + listing
    listed = await reader.store.ordered_ids(where, FILE_ORDER, asked)
    read = 0
    found: list[Member] = []
    while not found or shows(found) == len(found):  # the page could show more than it has
        if offset + read >= len(listed):
            if len(listed) < asked:  # the set ends here (or before the offset)
                break
            asked = offset + 2 * (asked - offset)
            listed = await reader.store.ordered_ids(where, FILE_ORDER, asked)
            if len(listed) <= offset + read:
                break
        batch = listed[offset + read : offset + read + WINDOW_READ]
        read += len(batch)
        found += await members_of(reader, batch)
    total = len(listed) if len(listed) < asked else await reader.store.count(where)  # a short listing is the set
    return SetWindow(total, found[: shows(found)], scanned=False)


async def members_of(reader: Reader, ids: Sequence[str]) -> list[Member]:
    """These points as members, in this order (a point deleted since its id was read is left out)."""
    found = {str(r.id): r.payload or {} for r in await reader.store.retrieve(ids, PAYLOAD_FIELDS)}
    return [Member(i, read_fields(found[i], ORDER_FIELDS), found[i]) for i in ids if i in found]


def hits_of(reader: Reader, members: Sequence[Member]) -> list[Hit]:
    """These members as hits (their payloads parsed), in the same order."""
    return [reader.hit(m.id, 1.0, m.payload) for m in members]
