"""The service's typed errors. Adapters translate third-party exceptions into these at the boundary.

ServiceError
├── ConfigError          settings that cannot work (and say how to fix them)
├── PayloadError         a request or webhook body we cannot accept (HTTP 400)
│   └── UnstorableError      a value PostgreSQL refuses to store (NUL, out of range): bad input, not an outage
├── SignatureError       a webhook that failed authentication (HTTP 401)
├── StorageError         Qdrant or PostgreSQL failed
│   └── IndexMismatchError   the collection was built with another embedding model or size
├── ProjectBusyError     another job holds the project's lock (retried later)
├── ConflictError        the request conflicts with work under way (a second rebuild; HTTP 409)
├── RateLimitedError     asked again too soon (HTTP 429, or a tool's refusal with the wait)
├── QueueUnavailableError  Redis failed (the arq queue, refresh limits, health records): `app.jobs.redis`
└── UpstreamError        a service we call failed
├── EmbeddingError       the embedding endpoint
│   ├── EmbeddingAuthError      wrong or missing API key (401/403); not retried
│   ├── EmbeddingModelError     unknown model (404 or a model error); not retried
│   ├── EmbeddingDimensionError vectors of an unexpected size; not retried
│   └── EmbeddingUnavailableError  429/5xx/timeouts that outlived the retries
└── GitLabError          the GitLab API
    ├── GitLabUnavailableError  5xx, 429 or timeouts that outlived python-gitlab's retries
    ├── GitLabNotFoundError     the project, ref or file does not exist (any more)
    └── GitLabAuthError         the token was refused
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error this service raises on purpose."""


class ConfigError(ServiceError):
    """Settings that cannot work."""


class PayloadError(ServiceError):
    """A request or webhook body that cannot be accepted."""


class UnstorableError(PayloadError):
    """A value the database cannot store (a NUL character, a number out of range): the input's fault."""


class SignatureError(ServiceError):
    """A webhook delivery that failed authentication."""


class StorageError(ServiceError):
    """The vector store or the database failed."""


class IndexMismatchError(StorageError):
    """The collection holds vectors of another embedding model or dimension."""


class ProjectBusyError(ServiceError):
    """Another job holds the project's lock; the lifecycle jobs retry later."""


class ConflictError(ServiceError):
    """The request conflicts with work under way (another model rebuild is not finished)."""


class RateLimitedError(ServiceError):
    """Asked again too soon; `retry_after_s` says when it may be asked again."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QueueUnavailableError(ServiceError):
    """Redis failed or did not answer (the arq queue, a refresh limit, a health record).

    Not in `TRANSIENT_ERRORS`: each caller says what a Redis outage means there (a delivery deferred
    to the worker, a nudge left to the reconcile sweep, a 503).
    """


class UpstreamError(ServiceError):
    """A service we depend on failed."""


class EmbeddingError(UpstreamError):
    """The embedding endpoint failed."""


class EmbeddingAuthError(EmbeddingError):
    """The embedding endpoint refused our credentials."""


class EmbeddingModelError(EmbeddingError):
    """The embedding endpoint does not know the configured model."""


class EmbeddingDimensionError(EmbeddingError):
    """The embedding endpoint returned vectors of an unexpected size."""


class EmbeddingUnavailableError(EmbeddingError):
    """The embedding endpoint stayed unavailable after every retry."""


class GitLabError(UpstreamError):
    """The GitLab API failed."""


class GitLabUnavailableError(GitLabError):
    """GitLab answered 5xx or 429, or timed out, after the client's own retries."""


class GitLabNotFoundError(GitLabError):
    """A project, ref or file that does not exist (any more)."""


class GitLabAuthError(GitLabError):
    """GitLab refused the token."""


TRANSIENT_ERRORS: tuple[type[ServiceError], ...] = (
    StorageError,
    EmbeddingUnavailableError,
    GitLabUnavailableError,
)
"""Failures worth retrying later: the sync job turns them into arq `Retry`."""
