"""Hits and their citations: what every search and lookup answers, and the order exact lookups answer in.

Every hit carries its citation from the stored metadata (never invented): repository, GitLab
project id, file, line span, qualified name, signature, commit and indexing time, and a GitLab
permalink when the GitLab URL is configured and the commit is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import TypedDict

from app.store.payloads import StoredChunk
from pipeline.model import Chunk, SymbolType
from pipeline.render import embedding_text, model_text

ORDER_FIELDS = ("repo_path", "file_path", "line_start", "part_index")
"""The chunk fields every exact lookup answers in the order of: repository, file, line and part."""


class Citation(TypedDict):
    """The fields an agent cites (the REST and MCP answers' schemas are derived from it)."""

    repo_path: str
    file_path: str
    line_start: int
    line_end: int
    qualified_name: str
    signature: str
    project_id: int | None
    commit_sha: str | None
    indexed_at: str | None
    permalink: str | None


@dataclass(frozen=True, slots=True)
class SetWindow:
    """The members a page of a set answer shows, and how many the set has (`scanned`: at least that many)."""

    total: int
    members: list[Member]
    scanned: bool


@dataclass(frozen=True, slots=True)
class Member:
    """A lookup's member: its point, its `ORDER_FIELDS` read, and its payload as stored (made a `Hit` when shown)."""

    id: str
    order: tuple[Any, ...]  # the values of ORDER_FIELDS
    payload: Mapping[str, Any] = field(repr=False)

    @property
    def repo_path(self) -> str:
        """The repository it is cited in."""
        return str(self.order[0])

    @property
    def file_path(self) -> str:
        """The file it is cited in."""
        return str(self.order[1])


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One result: the stored chunk it found, with its score and citation."""

    id: str
    score: float
    stored: StoredChunk = field(repr=False)
    permalink: str | None
    used_by: tuple[str, ...] = ()
    """For library code: the org's projects (readable by the caller) that use this version (`app.libraries.usage`)."""
    declaration: Hit | None = field(default=None, repr=False)
    """For an implementation shown for its bodiless declaration too (`app.search.fold`): that declaration."""

    @property
    def chunk(self) -> Chunk:
        """The chunk as stored (metadata and code; its embedding text is not stored)."""
        return self.stored.chunk

    @property
    def code(self) -> str:
        """The chunk's source code."""
        return self.stored.chunk.code

    @property
    def repo_path(self) -> str:
        """The repository cited."""
        return self.stored.chunk.repo_path

    @property
    def file_path(self) -> str:
        """The file cited, relative to its repository."""
        return self.stored.chunk.file_path

    @property
    def line_start(self) -> int:
        """The first line cited (its Javadoc included)."""
        return self.stored.chunk.line_start

    @property
    def line_end(self) -> int:
        """The last line cited."""
        return self.stored.chunk.line_end

    @property
    def qualified_name(self) -> str:
        """The symbol cited."""
        return self.stored.chunk.qualified_name

    @property
    def signature(self) -> str:
        """Its signature as the outline shows it."""
        return self.stored.chunk.signature

    @property
    def symbol_type(self) -> SymbolType:
        """What the chunk stands for."""
        return self.stored.chunk.symbol_type

    @property
    def commit_sha(self) -> str | None:
        """The commit the chunk was read at, when known."""
        return self.stored.chunk.commit_sha

    @property
    def indexed_at(self) -> str | None:
        """When the chunk was written to the store."""
        return self.stored.keys.indexed_at

    def citation(self) -> Citation:
        """The fields an agent cites."""
        return {
            "repo_path": self.repo_path,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "qualified_name": self.qualified_name,
            "signature": self.signature,
            "project_id": self.chunk.gitlab_project_id,
            "commit_sha": self.commit_sha,
            "indexed_at": self.indexed_at,
            "permalink": self.permalink,
        }


def hit_of(point_id: Any, score: float, payload: Mapping[str, Any] | None, gitlab_url: str | None) -> Hit:
    """A stored point as a hit, with its GitLab permalink when `gitlab_url` is set and the commit is known."""
    stored = StoredChunk.from_payload(payload or {})
    c = stored.chunk
    link = None
    if gitlab_url and c.commit_sha:
        link = f"{gitlab_url}/{c.repo_path}/-/blob/{c.commit_sha}/{c.file_path}#L{c.line_start}-{c.line_end}"
    return Hit(id=str(point_id), score=score, stored=stored, permalink=link)


def in_file_order(hits: list[Hit]) -> list[Hit]:
    """Hits by repository, file, line and part: the order every exact lookup answers in."""
    hits.sort(key=lambda h: tuple(getattr(h.chunk, name) for name in ORDER_FIELDS))
    return hits


def hit_text(hit: Hit) -> str:
    """What a cross-encoder reads of a hit: its header and code, as the embedding model read it (`pipeline.render`)."""
    return model_text(embedding_text(hit.chunk))
