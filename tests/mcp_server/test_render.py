"""Set answers fit the default budget: one citation line per member, the code of the first few only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final, overload

from app.search.hits import Hit
from app.search.results import place_floor
from app.store.payloads import StoredChunk, StoreKeys
from mcp_server.render import DEFAULT_BUDGET, SET_CODE_FIRST, most_shown, render_hits, render_window
from tests.support.java import header_chunk

MEMBERS: Final = 35
BODY: Final = "\n".join(f"        int step{i} = lookUpTheParcelWeightBeforeShipping({i});" for i in range(20))


def member(i: int) -> Hit:
    """A realistic member of a set: long package, deep module path, a 20-line method, a commit and project."""
    chunk = header_chunk(
        qualified_name=f"com.macro.mall.portal.service.impl.OmsPortalOrderServiceImpl{i}.generateOrder",
        file_path=f"mall-portal/src/main/java/com/macro/mall/portal/service/impl/OmsPortalOrderServiceImpl{i}.java",
        repo_path="macrozheng/mall",
        package="com.macro.mall.portal.service.impl",
        gitlab_project_id=4242,
        commit_sha="74eebe067d4f17b2d0b61691bef2748e3a7daf80",
        signature="generateOrder(OrderParam orderParam): Map<String, Object>",
        line_start=100 + i,
        line_end=122 + i,
        code="    public Map<String, Object> generateOrder(OrderParam orderParam) {\n" + BODY + "\n    }",
    )
    return Hit(id=str(i), score=1.0, stored=StoredChunk(chunk=chunk, keys=StoreKeys()), permalink=None)


def test_a_typical_set_fits_the_default_budget_whole() -> None:
    hits = [member(i) for i in range(MEMBERS)]
    rendered = render_hits(hits, excerpt_lines=12, header="Callers of X:", code_first=SET_CODE_FIRST)
    assert (len(rendered.items), rendered.omitted, rendered.next_offset) == (MEMBERS, 0, None)
    assert len(rendered.text) <= DEFAULT_BUDGET
    assert rendered.text.count("```java") == SET_CODE_FIRST
    for hit in hits:  # every member is cited, with its place and commit
        assert f"{hit.file_path}:{hit.line_start}-{hit.line_end} @ 74eebe067d4f (project 4242)" in rendered.text


def test_with_code_for_every_member_the_same_set_is_cut_and_says_where_to_go_on() -> None:
    hits = [member(i) for i in range(MEMBERS)]
    rendered = render_hits(hits, excerpt_lines=12, header="Callers of X:")
    assert 0 < len(rendered.items) < MEMBERS
    assert rendered.next_offset == len(rendered.items)
    assert rendered.text.endswith(
        f"[Shown 1-{len(rendered.items)} of {MEMBERS}: {rendered.omitted} more left out by the output budget. "
        f"Call again with offset={rendered.next_offset} for the rest, or raise max_chars.]"
    )
    rest = render_hits(hits, excerpt_lines=12, header="Callers of X:", offset=rendered.next_offset or 0)
    assert rest.items[0]["qualified_name"] == hits[len(rendered.items)].qualified_name
    assert rest.text.split("\n\n")[1].startswith(f"{len(rendered.items) + 1}. ")  # ranks go on from the offset


class Watched(Sequence[Hit]):
    """A set's hits that records which members were read."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.hits)

    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Hit]: ...
    def __getitem__(self, index: int | slice) -> Hit | Sequence[Hit]:
        positions = range(len(self.hits))[index] if isinstance(index, slice) else [range(len(self.hits))[index]]
        self.read.update(positions)
        return self.hits[index]


def test_a_large_set_renders_only_the_members_its_page_shows() -> None:
    hits = Watched([member(i) for i in range(500)])  # find_by_annotation scans up to 500
    rendered = render_hits(hits, excerpt_lines=8, header="Carrying @Override:", offset=10, code_first=SET_CODE_FIRST)
    assert (rendered.total, rendered.next_offset) == (500, 10 + len(rendered.items))
    assert len(rendered.items) < 100
    assert hits.read <= set(range(10, 10 + len(rendered.items) + 1))  # the shown ones and the one that did not fit


def test_a_generated_member_says_so() -> None:
    hit = member(0)
    generated = replace(hit, stored=StoredChunk(chunk=replace(hit.chunk, generated=True), keys=StoreKeys()))
    rendered = render_hits([generated], code_first=0)
    assert "(method, generated)" in rendered.text
    assert rendered.items[0]["generated"] is True


def varied(i: int) -> Hit:
    """A member whose place is short or long, so `most_shown` is tested near its bound."""
    hit = member(i)
    chunk = replace(
        hit.chunk, repo_path="g/r" if i % 3 else "a/very/deep/group/path/repository", file_path=f"F{i}.java"
    )
    return replace(hit, stored=StoredChunk(chunk=chunk, keys=StoreKeys()))


def test_a_window_of_the_members_a_page_can_show_renders_the_same_page_as_all() -> None:
    hits = [varied(i) for i in range(300)]
    floors = [place_floor(h.repo_path, h.file_path) for h in hits]
    for budget in (1, 200, 900, 4_000, DEFAULT_BUDGET, 60_000):
        for offset in (0, 7, 299):
            for code_first in (SET_CODE_FIRST, None):
                whole = render_hits(
                    hits, budget=budget, excerpt_lines=8, header="Carrying @X:", offset=offset, code_first=code_first
                )
                stop = offset + most_shown(floors[offset:], budget)
                window = render_window(
                    hits[offset:stop], total=len(hits), budget=budget, excerpt_lines=8, header="Carrying @X:",
                    offset=offset, code_first=code_first,
                )  # fmt: skip
                assert window == whole
                assert stop >= offset + len(whole.items)
    large = [member(i) for i in range(500)]
    assert most_shown((place_floor(h.repo_path, h.file_path) for h in large), DEFAULT_BUDGET) < 200  # it cuts
    assert most_shown([10, 10], 5) == 1  # the first entry is always shown
