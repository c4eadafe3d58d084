"""Token digests anyone could guess, and one digest given two roles: warned about at start and by `javakb doctor`.

Tokens are configured as their sha256 (`AdminToken.sha256`), so the service never sees the token
itself, but a digest of `changeme` is as good as no token: `weak_digests` holds the digests of a
small table of placeholders (with their usual variants) and of every string of one or two printable
characters. A digest listed both as an admin and as a service (or metrics, or index-job) token
means one token does two jobs: whoever reads the index through it may also administer it. The
messages name the variable and the token's `name`, never the token.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from functools import cache

from app.core.access_settings import AdminToken, token_digest
from app.core.secret_rules import PLACEHOLDERS
from app.core.settings import Settings

WEAK_WORDS = PLACEHOLDERS | {
    "admin", "test", "testing", "dev", "demo", "default", "pass", "passwd", "root", "qwerty", "letmein",
    "abc", "abc123", "123", "1234", "12345", "123456", "12345678", "foo", "bar", "foobar", "javakb", "gitlab",
}  # fmt: skip
"""Placeholders seen in sample configurations and tutorials; each also capitalized, upper-cased, and with 1, 123, !."""

SHORT_CHARS = 2
"""Every printable string up to this length is in the table too."""


@cache
def weak_digests() -> frozenset[str]:
    """The sha256 of every weak word and variant, and of every printable string of at most `SHORT_CHARS`."""
    return frozenset(token_digest(value) for value in _weak_values())


def _weak_values() -> Iterator[str]:
    for word in WEAK_WORDS:
        for form in (word, word.capitalize(), word.upper()):
            yield from (form, form + "1", form + "123", form + "!")
    chars = string.ascii_letters + string.digits + string.punctuation + " "
    yield from chars
    yield from (a + b for a in chars for b in chars)


def token_lists(settings: Settings) -> dict[str, list[AdminToken]]:
    """Every configured list of token digests, by its environment variable."""
    return {
        "JAVAKB_ADMIN_TOKENS": list(settings.admin_tokens),
        "JAVAKB_SERVICE_TOKENS": list(settings.service_tokens),
        "JAVAKB_INDEX_JOB_TOKENS": list(settings.index_job_tokens),
        "JAVAKB_METRICS_TOKENS": list(settings.metrics_tokens),
    }


def digest_warnings(settings: Settings) -> list[str]:
    """Why configured digests are unsafe: a guessable token, or one token in two roles (never the token)."""
    warnings = []
    seen: dict[str, str] = {}
    for variable, entries in token_lists(settings).items():
        for entry in entries:
            where = f"{variable} entry {entry.name!r}"
            if entry.sha256 in weak_digests():
                warnings.append(f"{where} is the sha256 of a placeholder or a short string: anyone can guess it")
            first = seen.setdefault(entry.sha256, where)
            if first != where and first.split()[0] != variable:
                warnings.append(f"{first} and {where} have the same digest: one token holds both roles")
    return warnings
