"""The one Settings object. Built by the entrypoints only and passed down; tests build it directly.

Every field can be set from the environment with the `JAVAKB_` prefix; nested fields use `__`,
for example `JAVAKB_CHUNKING__MAX_CHUNK_TOKENS=1200`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipeline.model import ChunkerConfig

_DEFAULTS = ChunkerConfig()


class ChunkingSettings(BaseModel):
    """What is indexed and how Java is cut into chunks."""

    include: tuple[str, ...] = Field(default=_DEFAULTS.include, description="Globs of files to index.")
    exclude: tuple[str, ...] = Field(default=_DEFAULTS.exclude, description="Globs never indexed, even if included.")
    max_chunk_tokens: int = Field(default=_DEFAULTS.max_chunk_tokens, ge=64, description="Budget per method part.")
    max_file_bytes: int = Field(default=_DEFAULTS.max_file_bytes, ge=1, description="Larger files are skipped.")
    fallback_encoding: str | None = Field(
        default=_DEFAULTS.fallback_encoding, description="Tried when a file is not UTF-8; empty to skip such files."
    )

    def to_config(self) -> ChunkerConfig:
        """The pipeline's view of these settings."""
        return ChunkerConfig(
            include=self.include,
            exclude=self.exclude,
            max_chunk_tokens=self.max_chunk_tokens,
            max_file_bytes=self.max_file_bytes,
            fallback_encoding=self.fallback_encoding or None,
        )


class Settings(BaseSettings):
    """Service configuration."""

    model_config = SettingsConfigDict(env_prefix="JAVAKB_", env_nested_delimiter="__", extra="ignore")

    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
