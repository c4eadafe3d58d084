"""The `shop` fixture project chunked the way `javakb chunks` walks a checkout, and lookups into it.

See `tests/fixtures/java/shop/FIXTURE.md` for what the project contains.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.sync.localfs import chunk_local_files, iter_sources
from pipeline.model import Chunk, ChunkerConfig, FileResult, SourceContext, SymbolType
from pipeline.scope import Scope
from tests.support.java_fixtures import SHOP_DIR

API = "com.acme.shop.api"
CORE = "com.acme.shop.core"
JOBS = "com.acme.shop.jobs"
HALF = "com.acme.shop.broken.HalfWritten"
API_SRC = "shop-api/src/main/java/com/acme/shop/api"
CORE_SRC = "shop-core/src/main/java/com/acme/shop"
JOBS_SRC = "shop-jobs/src/main/java/com/acme/shop/jobs"
REPO = "acme/shop"


@dataclass(frozen=True, slots=True, repr=False)
class Shop:
    """The chunked fixture: the files in scope and each file's result."""

    files: tuple[str, ...]
    results: Mapping[str, FileResult]

    def __repr__(self) -> str:  # keeps failure reports short
        return f"Shop({len(self.files)} files, {len(self.chunks)} chunks)"

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        return tuple(chunk for result in self.results.values() for chunk in result.chunks)

    def one(self, qualified_name: str, parameter_types: tuple[str, ...] | None = None) -> Chunk:
        """The one whole (not split) chunk of a symbol; overloads are told apart by parameter types."""
        found = [
            c
            for c in self.chunks
            if c.qualified_name == qualified_name
            and c.symbol_type is not SymbolType.METHOD_PART
            and (parameter_types is None or c.parameter_types == parameter_types)
        ]
        assert len(found) == 1, f"{qualified_name} {parameter_types or ''}: {len(found)} chunks"
        return found[0]

    def parts(self, qualified_name: str) -> list[Chunk]:
        """Every chunk of a symbol, in part order (the parts of a split method)."""
        found = [c for c in self.chunks if c.qualified_name == qualified_name]
        return sorted(found, key=lambda c: c.part_index)

    def result(self, file_path: str) -> FileResult:
        return self.results[file_path]


def chunk_shop(config: ChunkerConfig | None = None) -> Shop:
    """Walk the fixture with the scope rules and chunk every file in scope."""
    config = config or ChunkerConfig()
    files = list(iter_sources(SHOP_DIR, Scope.from_config(config)))
    results = {r.file_path: r for r in chunk_local_files(files, SourceContext(repo_path=REPO), config)}
    return Shop(files=tuple(rel for rel, _ in files), results=results)


def short(qualified_name: str) -> str:
    """`com.acme.shop.core.service.OwnerService.find` -> `OwnerService.find`, for readable test ids."""
    parts = qualified_name.split(".")
    first_upper = next(i for i, p in enumerate(parts) if p[:1].isupper())
    return ".".join(parts[first_upper:])


def case_id(qualified_name: str, parameter_types: tuple[str, ...] | None = None) -> str:
    """A readable test id: `OwnerService.find(String,int)`."""
    name = short(qualified_name)
    return f"{name}({','.join(parameter_types)})" if parameter_types is not None else name
