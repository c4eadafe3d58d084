"""The one Settings object. Built by the entrypoints only and passed down; tests build it directly.

Every field can be set from the environment with the `JAVAKB_` prefix; nested fields use `__`,
for example `JAVAKB_CHUNKING__MAX_CHUNK_TOKENS=1200`.
"""

from __future__ import annotations

import enum
import logging
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.access_settings import (
    AccessSettings,
    AdminToken,
    IndexJobToken,
    OAuthSettings,
    ServiceToken,
)
from app.core.embedded import EMBEDDED_DENSE_WEIGHTS, EMBEDDED_MODEL, EMBEDDED_MODELS
from app.core.secret_errors import hide_secret_inputs
from app.core.secret_rules import empty_is_unset, whsec_key
from app.core.store_settings import QdrantSettings as QdrantSettings
from pipeline.model import ChunkerConfig

logger = logging.getLogger(__name__)


_DEFAULTS = ChunkerConfig()


class ChunkingSettings(BaseModel):
    """What is indexed and how Java is cut into chunks."""

    include: tuple[str, ...] = Field(default=_DEFAULTS.include, description="Globs of files to index.")
    exclude: tuple[str, ...] = Field(default=_DEFAULTS.exclude, description="Globs never indexed, even if included.")
    config_repos: tuple[str, ...] = Field(default=_DEFAULTS.config_repos, description="Spring Cloud Config repo globs")
    tests: tuple[str, ...] = Field(
        default=_DEFAULTS.tests, description="Globs of test code: its .java files indexed only with index_tests"
    )
    index_tests: bool = Field(
        default=_DEFAULTS.index_tests,
        description="Index test code too, flagged: searched with scope tests only, never in code answers",
    )
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
            config_repos=self.config_repos,
            tests=self.tests,
            index_tests=self.index_tests,
            max_chunk_tokens=self.max_chunk_tokens,
            max_file_bytes=self.max_file_bytes,
            fallback_encoding=self.fallback_encoding or None,
        )


EmbeddingProvider = Literal["embedded", "endpoint", "none"]


class EmbeddingSettings(BaseModel):
    """Where dense vectors come from: the embedded model (default), an OpenAI-compatible endpoint, or none.

    `provider` unset means `endpoint` when `base_url` is set and `embedded` otherwise, so a configuration
    that names an endpoint keeps it; `none` is lexical-only search, chosen explicitly.
    """

    provider: EmbeddingProvider | None = Field(
        default=None,
        description="embedded (in-process static code model), endpoint (base_url) or none (lexical-only); "
        "unset: endpoint with a base_url, else embedded",
    )
    embedded_model: str = Field(
        default=EMBEDDED_MODEL, description=f"The embedded provider's model: one of {', '.join(EMBEDDED_MODELS)}"
    )
    model_cache: str = Field(
        default="~/.cache/javakb/models",
        description="Folder where the embedded model's table is kept: distilled once (scripts/bootstrap, the image's "
        "build, else the first use), never downloaded.",
    )
    base_url: str | None = Field(default=None, description="e.g. https://api.openai.com/v1 or http://ollama:11434/v1")
    api_key: SecretStr | None = Field(
        default=None, description="Bearer key (also sent as api-key for Azure-style gateways)"
    )
    model: str = Field(
        default="text-embedding-3-small", description="The endpoint's model name (the embedded model has its own)"
    )
    dimensions: int | None = Field(default=None, ge=1, description="Ask the model for this many dimensions.")
    dense_weight: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="The dense list's weight against the lexical one's 1.0 in the fusion of a hybrid search "
        "(unset: the embedded model's, 1.0 but 0.5 for the code token table; 1.0 for an endpoint's).",
    )
    batch_size: int = Field(default=64, ge=1, le=2048, description="Inputs per request.")
    max_batch_tokens: int = Field(default=100_000, ge=1, description="Estimated tokens per request.")
    max_input_tokens: int = Field(default=8000, ge=16, description="The model's input limit; longer inputs are cut.")
    concurrency: int = Field(default=4, ge=1, description="Requests in flight at once.")
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds before a request is abandoned (and retried)")
    max_retries: int = Field(default=6, ge=0, description="Retries on 429, 5xx and timeouts.")
    max_backoff_s: float = Field(default=30.0, gt=0, description="Longest wait between retries")
    query_prefix: str = Field(
        default="", description='Put before every question embedded, as asymmetric models want (E5: "query: ").'
    )
    document_prefix: str = Field(
        default="",
        description='Put before every chunk text embedded (E5: "passage: "); rebuild the index after a change.',
    )

    _unset_empty = field_validator("api_key", mode="before")(empty_is_unset)

    @model_validator(mode="after")
    def _endpoint_has_url(self) -> EmbeddingSettings:
        if self.embedded_model not in EMBEDDED_MODELS:
            raise ValueError(f"embedded_model must be one of {', '.join(EMBEDDED_MODELS)}, got {self.embedded_model!r}")
        if self.provider == "endpoint" and not self.base_url:
            raise ValueError("embedding provider 'endpoint' needs base_url (JAVAKB_EMBEDDING__BASE_URL)")
        return self

    @property
    def source(self) -> EmbeddingProvider:
        """The provider in force: `provider`, or the one `base_url` implies when unset."""
        if self.provider is not None:
            return self.provider
        return "endpoint" if self.base_url else "embedded"

    @property
    def enabled(self) -> bool:
        """Whether dense vectors are produced at all (hybrid search)."""
        return self.source != "none"

    @property
    def model_name(self) -> str | None:
        """The model whose vectors the collection holds: the embedded one, the endpoint's `model`, or None."""
        return {"embedded": self.embedded_model, "endpoint": self.model, "none": None}[self.source]

    @property
    def fusion_weight(self) -> float:
        """The dense list's weight in the fusion: `dense_weight`, else the model's (`EMBEDDED_DENSE_WEIGHTS`, 1.0)."""
        if self.dense_weight is not None:
            return self.dense_weight
        return EMBEDDED_DENSE_WEIGHTS.get(self.embedded_model, 1.0) if self.source == "embedded" else 1.0


class SummarySettings(BaseModel):
    """Optional one-sentence descriptions of new chunks from an OpenAI-compatible chat endpoint (off without a URL)."""

    base_url: str | None = Field(
        default=None, description="e.g. http://vllm:8000/v1 (POST {base_url}/chat/completions)"
    )
    api_key: SecretStr | None = Field(default=None, description="Bearer key, when the endpoint wants one")
    model: str = Field(default="gpt-4o-mini", description="Chat model asked")
    concurrency: int = Field(default=4, ge=1, le=64, description="Requests in flight at once")
    timeout_s: float = Field(default=30.0, gt=0, description="Seconds before a chunk is indexed without one")
    max_input_chars: int = Field(default=6000, ge=200, description="Each chunk's text is cut to this length")
    max_tokens: int = Field(default=80, ge=8, description="Longest description asked for")
    max_failures: int = Field(
        default=5, ge=1, description="Failures in a row after which a write asks no more (its chunks go without)"
    )

    _unset_empty = field_validator("api_key", mode="before")(empty_is_unset)

    @property
    def enabled(self) -> bool:
        """Whether new chunks are described at all."""
        return bool(self.base_url)


class RerankSettings(BaseModel):
    """An optional cross-encoder behind the `/rerank` API of TEI, Jina and Cohere; off without a base URL."""

    base_url: str | None = Field(default=None, description="e.g. http://reranker:8080 (POST {base_url}/rerank)")
    api_key: SecretStr | None = Field(default=None, description="Bearer key, when the endpoint wants one")
    model: str = Field(default="", description="Model name sent with each request (empty: the server's own)")
    candidates: int = Field(default=20, ge=2, le=200, description="Best fused results re-scored per search")
    max_chars: int = Field(default=2000, ge=100, description="Each result's text is cut to this many characters")
    timeout_s: float = Field(default=5.0, gt=0, description="Seconds before the fused order is kept instead")

    _unset_empty = field_validator("api_key", mode="before")(empty_is_unset)

    @property
    def enabled(self) -> bool:
        """Whether searches are re-scored at all."""
        return bool(self.base_url)


class PostgresSettings(BaseModel):
    """Where the sync state lives."""

    dsn: SecretStr = Field(
        default=SecretStr("postgresql://root@127.0.0.1:5432/javakb"),
        description="Connection URL; the database is created on first start",
    )
    min_pool: int = Field(default=1, ge=0, description="Connections kept open per process")
    max_pool: int = Field(default=10, ge=1, description="Most connections per process")


class QueueSettings(BaseModel):
    """The arq queue."""

    url: str = Field(default="redis://127.0.0.1:6379/0", description="Redis URL of the arq queue")
    queue: str = Field(default="javakb:queue", description="arq queue name")


GITLAB_UNSET = "GitLab is not configured: set JAVAKB_GITLAB__URL and JAVAKB_GITLAB__TOKEN"


class GitLabSettings(BaseModel):
    """The GitLab instance: API access for the sync, and webhook authentication for the receiver."""

    url: str | None = Field(default=None, description="Base URL, e.g. https://gitlab.example.com")
    token: SecretStr | None = Field(default=None, description="A token with read_api/read_repository on every project")
    webhook_secret: SecretStr | None = Field(default=None, description="The hook's secret token (X-Gitlab-Token)")
    signing_token: SecretStr | None = Field(default=None, description="Standard Webhooks signing key (whsec_...)")
    signature_tolerance_s: int = Field(
        default=300, ge=1, description="Oldest webhook-timestamp a signature is accepted with"
    )
    max_body_bytes: int = Field(default=5 * 1024 * 1024, ge=1024, description="Larger deliveries get 413")
    timeout_s: float = Field(default=30.0, gt=0, description="Seconds per GitLab API call")
    api_concurrency: int = Field(default=8, ge=1, description="GitLab API calls in flight per sync")

    _unset_empty = field_validator("token", "webhook_secret", "signing_token", mode="before")(empty_is_unset)

    @field_validator("signing_token")
    @classmethod
    def _whsec(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            whsec_key(value.get_secret_value())  # a malformed key refuses to start, not every delivery
        return value


class ScopeSettings(BaseModel):
    """Which GitLab projects are indexed at all (issue 9): the admin's allow and deny lists and exclusions.

    Prefixes are group or namespace paths (`acme`, `acme/platform`) matched on whole path segments and
    case-insensitively, as GitLab routes are; a deny prefix beats an allow prefix.
    """

    allow: tuple[str, ...] = Field(default=(), description="Namespace path prefixes indexed; empty allows all.")
    deny: tuple[str, ...] = Field(default=(), description="Namespace path prefixes never indexed.")
    personal: bool = Field(default=False, description="Index projects in personal (user) namespaces.")
    forks: bool = Field(default=False, description="Index forks.")
    archived: bool = Field(default=False, description="Index archived projects.")
    ignore_topic: str | None = Field(
        default="javakb-ignore", description="A project with this topic is not indexed; empty disables it."
    )

    @field_validator("allow", "deny")
    @classmethod
    def _prefixes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(p.strip().strip("/").lower() for p in value)
        if any(not p or "//" in p for p in cleaned):
            raise ValueError(f"a prefix must be a namespace path such as 'acme/platform', got {list(value)!r}")
        return cleaned

    @field_validator("ignore_topic")
    @classmethod
    def _topic(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


class SyncWorkerSettings(BaseModel):
    """The sync worker."""

    max_jobs: int = Field(default=4, ge=1, description="Jobs one worker runs at once")
    job_timeout_s: int = Field(default=3600, ge=10, description="A sync running longer is cancelled (and retried)")
    max_tries: int = Field(default=8, ge=1, description="Tries of a sync job before arq gives it up")
    parse_processes: int = Field(default=0, ge=0, description="0: parse in threads; N: a pool of N processes")
    files_per_batch: int = Field(default=64, ge=1, description="Files fetched, parsed and written per batch")
    reconcile_every_s: int = Field(
        default=300, ge=10, description="How often the sweep compares GitLab's heads with the index (divides a day)"
    )
    full_sweep_every_s: int = Field(
        default=3600, ge=0, description="How often the sweep lists every project, not only active ones (0: always)"
    )
    name: str | None = Field(
        default=None, description="This worker's name in its health check key; unset: the host name (a pod's name)"
    )
    health_port: int = Field(
        default=8081, ge=0, le=65535, description="Port of `javakb worker`'s GET /healthz for probes (0: none)"
    )

    @field_validator("reconcile_every_s")
    @classmethod
    def _schedulable(cls, every_s: int) -> int:
        cron_fields(every_s)  # the worker's cron must run at exactly this interval
        return every_s


class BackfillSettings(BaseModel):
    """Admin backfills (`POST /admin/reindex`): how many projects sync at once, and how a first fetch is made."""

    concurrency: int = Field(
        default=2,
        ge=1,
        description="Projects a backfill syncs at once (at most JAVAKB_WORKER__MAX_JOBS - 1): the other worker"
        " slots stay free for live pushes",
    )
    poll_s: float = Field(default=0.5, gt=0, description="How often the dispatcher looks for finished projects")
    archive: bool = Field(
        default=True,
        description="Fetch a never-indexed project as one repository archive (tar.gz at the head), falling back"
        " to the tree and blobs when GitLab refuses it",
    )


class MavenRepository(BaseModel):
    """One Maven repository sources jars are fetched from (Maven Central's layout)."""

    url: str = Field(
        description="Base URL, e.g. https://repo.maven.apache.org/maven2 or a Nexus/GitLab package registry"
    )
    username: str | None = Field(default=None, description="Basic auth user, with `password`")
    password: SecretStr | None = Field(default=None, description="Basic auth password")
    token: SecretStr | None = Field(default=None, description="A token sent in the `token_header` header")
    token_header: str = Field(
        default="Private-Token", description="The header the token goes in (GitLab: Private-Token, Deploy-Token)"
    )


class LibrarySettings(BaseModel):
    """Dependency sources (issue 16): which libraries the projects use are indexed, from where, within what budget."""

    enabled: bool = Field(default=True, description="Record the dependencies projects declare (always cheap)")
    repositories: list[MavenRepository] = Field(
        default_factory=list,
        description="Maven repositories tried in order for each `-sources.jar`; none: dependencies are recorded,"
        " no library is indexed",
    )
    allow: list[str] = Field(
        default_factory=list,
        description="Globs of `group` or `group:artifact` to index (`org.springframework*`, `com.acme:*`); empty: all",
    )
    min_projects: int = Field(
        default=1, ge=1, description="Index a library version only when this many projects use it"
    )
    max_libraries: int = Field(default=200, ge=0, description="Library versions indexed at most, most used first")
    max_bytes: int = Field(
        default=500 * 1024 * 1024, ge=0, description="Bytes of sources jars indexed at most, all libraries together"
    )
    max_jar_bytes: int = Field(default=50 * 1024 * 1024, ge=1, description="A larger sources jar is not indexed")
    max_jar_entries: int = Field(
        default=5000,
        ge=1,
        description="`.java` files read from one sources jar at most (name order); the rest are left out and the"
        " library's row says so",
    )
    max_library_chunks: int = Field(
        default=30_000,
        ge=1,
        description="Chunks indexed per library version at most (whole files, name order); the rest are left out"
        " and the library's row says so",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Timeout of one jar download")


class AdminClientSettings(BaseModel):
    """How `javakb admin reindex` and `javakb admin status` reach the admin API."""

    url: str | None = Field(default=None, description="The service's base URL; unset: http://HOST:PORT")
    token: SecretStr | None = Field(default=None, description="An admin token (one of JAVAKB_ADMIN_TOKENS, in clear)")

    _unset_empty = field_validator("token", mode="before")(empty_is_unset)


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


class GeneratedCode(enum.StrEnum):
    """What free-text search does with code a generator wrote (`pipeline.generated`)."""

    DEMOTE = "demote"  # ranked after every hand-written result
    EXCLUDE = "exclude"  # left out, inside the store query
    INCLUDE = "include"  # ranked like any other code


class SearchSettings(BaseModel):
    """Free-text search."""

    generated_code: GeneratedCode = Field(
        default=GeneratedCode.DEMOTE,
        description="Generated code in semantic search: `demote` (after hand-written results), `exclude` or"
        " `include`; exact lookups always answer it, marked",
    )
    max_concurrent: int = Field(
        default=2,
        ge=1,
        description="Free-text searches a process computes at once; more wait their turn (their reads and CPU"
        " work hold the event loop's share of the GIL: docs/performance.md)",
    )


class Settings(BaseSettings):
    """Service configuration."""

    model_config = SettingsConfigDict(env_prefix="JAVAKB_", env_nested_delimiter="__", extra="ignore")

    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    next_embedding: EmbeddingSettings | None = Field(
        default=None,
        description="The model a rebuild (`javakb admin rebuild`) fills the new generation with; unset: the current"
        " one. Running processes follow the alias to it when the rebuild switches",
    )
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    summaries: SummarySettings = Field(default_factory=SummarySettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    redis: QueueSettings = Field(default_factory=QueueSettings)
    gitlab: GitLabSettings = Field(default_factory=GitLabSettings)
    worker: SyncWorkerSettings = Field(default_factory=SyncWorkerSettings)
    scope: ScopeSettings = Field(default_factory=ScopeSettings)
    backfill: BackfillSettings = Field(default_factory=BackfillSettings)
    admin: AdminClientSettings = Field(default_factory=AdminClientSettings)
    libraries: LibrarySettings = Field(default_factory=LibrarySettings)
    admin_tokens: list[AdminToken] = Field(default_factory=list, description="Hashed bearer tokens for /admin")
    service_tokens: list[ServiceToken] = Field(default_factory=list, description="Hashed bearer tokens for MCP, REST")
    index_job_tokens: list[IndexJobToken] = Field(
        default_factory=list, description="Hashed bearer tokens for POST /api/v1/index-jobs, each for one project"
    )
    oauth: OAuthSettings = Field(default_factory=OAuthSettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    host: str = Field(default="127.0.0.1", description="Address the web server (and the worker's /healthz) listens on")
    port: int = Field(default=8080, ge=1, le=65535, description="Port of the web server")
    watch: list[str] = Field(default_factory=list, description="Local checkouts `javakb serve` indexes and keeps fresh")
    watch_interval_s: float = Field(default=2.0, gt=0, description="How often watched checkouts are checked")
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING or ERROR")
    log_format: Literal["text", "json"] = Field(
        default="text", description="`json`: one JSON object per line, with the delivery, project, job and request ids"
    )
    metrics_tokens: list[AdminToken] = Field(
        default_factory=list,
        description="Hashed bearer tokens for GET /metrics (web port and the worker's health port); none: /metrics"
        " answers 404",
    )
    dev_mode: bool = Field(
        default=False,
        description="Allow placeholder and short secrets (never in production)",
    )

    _hide_secrets = model_validator(mode="wrap")(hide_secret_inputs)  # a bad secret's error names it, not its value
