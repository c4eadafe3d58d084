"""The one Settings object. Built by the entrypoints only and passed down; tests build it directly.

Every field can be set from the environment with the `JAVAKB_` prefix; nested fields use `__`,
for example `JAVAKB_CHUNKING__MAX_CHUNK_TOKENS=1200`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, field_validator
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


class PostgresSettings(BaseModel):
    """Where the sync state lives."""

    dsn: SecretStr = SecretStr("postgresql://root@127.0.0.1:5432/javakb")
    min_pool: int = Field(default=1, ge=0)
    max_pool: int = Field(default=10, ge=1)


class RedisSettings(BaseModel):
    """The arq queue."""

    url: str = "redis://127.0.0.1:6379/0"
    queue: str = Field(default="javakb:queue", description="arq queue name")


GITLAB_UNSET = "GitLab is not configured: set JAVAKB_GITLAB__URL and JAVAKB_GITLAB__TOKEN"


class GitLabSettings(BaseModel):
    """The GitLab instance: API access for the sync, and webhook authentication for the receiver."""

    url: str | None = Field(default=None, description="Base URL, e.g. https://gitlab.example.com")
    token: SecretStr | None = Field(default=None, description="A token with read_api/read_repository on every project")
    webhook_secret: SecretStr | None = Field(default=None, description="The hook's secret token (X-Gitlab-Token)")
    signing_token: SecretStr | None = Field(default=None, description="Standard Webhooks signing key (whsec_...)")
    signature_tolerance_s: int = Field(default=300, ge=1)
    max_body_bytes: int = Field(default=5 * 1024 * 1024, ge=1024, description="Larger deliveries get 413")
    timeout_s: float = Field(default=30.0, gt=0)
    api_concurrency: int = Field(default=8, ge=1, description="GitLab API calls in flight per sync")


class WorkerSettings(BaseModel):
    """The sync worker."""

    max_jobs: int = Field(default=4, ge=1)
    job_timeout_s: int = Field(default=3600, ge=10)
    max_tries: int = Field(default=8, ge=1)
    parse_processes: int = Field(default=0, ge=0, description="0: parse in threads; N: a pool of N processes")
    files_per_batch: int = Field(default=64, ge=1)
    reconcile_every_s: int = Field(
        default=300, ge=10, description="How often the sweep compares GitLab's heads with the index (divides a day)"
    )
    full_sweep_every_s: int = Field(
        default=3600, ge=0, description="How often the sweep lists every project, not only active ones (0: always)"
    )

    @field_validator("reconcile_every_s")
    @classmethod
    def _schedulable(cls, every_s: int) -> int:
        cron_fields(every_s)  # the worker's cron must run at exactly this interval
        return every_s


def cron_fields(every_s: int) -> dict[str, set[int]]:
    """Arq `cron` fields that fire every `every_s` seconds exactly, from midnight.

    Raises:
        ValueError: unless the interval divides a minute, an hour or a day evenly (a cron cannot
            keep any other interval: 45 s would fire at :00 and :45, 15 s apart).
    """
    fields: dict[str, set[int]] = {}
    for unit, span, name in ((1, 60, "second"), (60, 3600, "minute"), (3600, 86400, "hour")):
        if every_s < span or unit == 3600:
            if every_s % unit or span % every_s:
                break
            return fields | {name: set(range(0, span // unit, every_s // unit))}
        fields[name] = {0}
    raise ValueError(f"{every_s} s does not divide a minute, an hour or a day evenly (e.g. 30, 60, 300, 3600)")


class Settings(BaseSettings):
    """Service configuration."""

    model_config = SettingsConfigDict(env_prefix="JAVAKB_", env_nested_delimiter="__", extra="ignore")

    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    gitlab: GitLabSettings = Field(default_factory=GitLabSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    admin_tokens: list[SecretStr] = Field(default_factory=list, description="Bearer tokens for /admin")
    api_tokens: list[SecretStr] = Field(default_factory=list, description="Bearer tokens for MCP and /api/v1")
    host: str = "127.0.0.1"
    port: int = 8080
    log_level: str = "INFO"
