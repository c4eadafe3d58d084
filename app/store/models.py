"""Which embedding model makes the vectors of a generation, while a rebuild changes it in service mode.

During a model rebuild (`app.sync.rebuild`) a process knows two models: the current one
(`JAVAKB_EMBEDDING__*`) and the next one (`JAVAKB_NEXT_EMBEDDING__*`). The alias first points at a
generation of the current model and, after the switch, at one of the next: `RoutedEmbedder` embeds
with whichever of the two the alias's generation records, read at every call (one alias lookup; the
model a generation records never changes, so it is cached by name). Searches and syncs of a running
process therefore follow the switch without a restart, and the settings can be updated afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.errors import IndexMismatchError
from app.store.embeddings import Embedder
from app.store.engines import Store
from app.store.vectors import IndexModel


async def model_of(embedder: Embedder | None) -> IndexModel:
    """What the vectors of `embedder` are (lexical-only without one)."""
    if embedder is None:
        return IndexModel(embedding_model=None, dimension=None)
    return IndexModel(embedding_model=embedder.model, dimension=await embedder.dimension())


class RoutedEmbedder:
    """An `Embedder` that embeds with the configured model the alias's generation was built with."""

    def __init__(self, store: Store, current: Embedder, next_model: Embedder) -> None:
        self.store = store
        self.current = current
        self.next = next_model
        self.model = current.model  # what logs and the doctor name before a generation is read
        self._recorded: dict[str, IndexModel | None] = {}

    async def serving(self) -> Embedder:
        """The embedder whose model the alias's generation records (the current one before any generation).

        Raises:
            IndexMismatchError: the generation records neither model.
        """
        target = await self.store.target()
        if target is None:
            return self.current
        if target not in self._recorded:
            self._recorded[target] = await self.store.recorded_model(target)
        recorded = self._recorded[target]
        for embedder in (self.current, self.next):
            if await model_of(embedder) == recorded:
                return embedder
        described = recorded.describe() if recorded else "an unknown model"
        raise IndexMismatchError(f"{target} holds vectors of {described}, neither the current nor the next model")

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Chunk vectors of the serving model."""
        return await (await self.serving()).embed(texts)

    async def embed_query(self, text: str) -> list[float]:
        """A question's vector of the serving model."""
        return await (await self.serving()).embed_query(text)

    async def dimension(self) -> int:
        """The serving model's vector size."""
        return await (await self.serving()).dimension()
