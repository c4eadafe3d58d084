"""Set answers fit the default budget: one citation line per member, the code of the first few only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final, overload

from app.search.service import Hit
from app.store.payloads import StoredChunk, StoreKeys
from mcp_server.render import DEFAULT_BUDGET, SET_CODE_FIRST, render_hits
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
