"""Where the sync writes: the alias's generation, and a model rebuild's new generation while it fills.

Read under the project's lock: a rebuild starts and switches only while it holds the generations
lock exclusively (`Database.generations_lock`), which every project lock holds shared, so the
answer stays true until the lock is released.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.runtime import Deps
from app.store.indexing import Indexer


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A generation to write (None: the one the alias points at) and the indexer embedding with its model."""

    collection: str | None
    indexer: Indexer


async def write_targets(deps: Deps) -> list[Target]:
    """The alias's generation, then the new generation of a rebuild that is filling (pushes go to both)."""
    primary = Target(collection=None, indexer=deps.indexer)
    active = await deps.db.active_rebuild() if deps.db is not None else None
    if active is None or not active.building:
        return [primary]
    return [primary, Target(collection=active.collection, indexer=deps.indexer.using(deps.next_embedder))]


async def collections(deps: Deps) -> list[str | None]:
    """The generations a payload-only change (rename, citation, purge) applies to."""
    return [t.collection for t in await write_targets(deps)]
