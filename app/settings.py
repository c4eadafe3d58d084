"""The one Settings object. Built by the entrypoints only and passed down; tests build it directly.

Every field can be set from the environment with the `JAVAKB_` prefix; nested fields use `__`,
for example `JAVAKB_CHUNKING__MAX_CHUNK_TOKENS=1200`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr
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


class EmbeddingSettings(BaseModel):
    """An OpenAI-compatible `/v1/embeddings` endpoint. Without a base URL the service is lexical-only."""

    base_url: str | None = Field(default=None, description="e.g. https://api.openai.com/v1 or http://ollama:11434/v1")
    api_key: SecretStr | None = None
    model: str = "text-embedding-3-small"
    dimensions: int | None = Field(default=None, ge=1, description="Ask the model for this many dimensions.")
    batch_size: int = Field(default=64, ge=1, le=2048, description="Inputs per request.")
    max_batch_tokens: int = Field(default=100_000, ge=1, description="Estimated tokens per request.")
    max_input_tokens: int = Field(default=8000, ge=16, description="The model's input limit; longer inputs are cut.")
    concurrency: int = Field(default=4, ge=1, description="Requests in flight at once.")
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=6, ge=0, description="Retries on 429, 5xx and timeouts.")
    max_backoff_s: float = Field(default=30.0, gt=0)

    @property
    def enabled(self) -> bool:
        """Whether dense vectors are produced at all."""
        return bool(self.base_url)


class QdrantSettings(BaseModel):
    """Where the vectors live: a Qdrant server (url) or the embedded local mode (path)."""

    url: str | None = Field(default=None, description="Qdrant server URL; unset means embedded local mode.")
    api_key: SecretStr | None = None
    path: str = Field(default=".javakb/qdrant", description="Storage folder of the embedded mode.")
    collection: str = Field(default="java_code", description="The alias searched; one per organization.")
    timeout_s: float = Field(default=30.0, gt=0)


class Settings(BaseSettings):
    """Service configuration."""

    model_config = SettingsConfigDict(env_prefix="JAVAKB_", env_nested_delimiter="__", extra="ignore")

    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    gitlab_url: str | None = Field(default=None, description="Base URL of GitLab, used for permalinks.")
