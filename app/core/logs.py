"""Logging configured once, from a pure `log_config(level, fmt, secrets)` passed to `dictConfig`.

Logged values come from outside (headers, payload fields, error messages that quote input): one
newline in a value would forge a whole log line. The one handler therefore escapes control
characters and caps the length of every record's message and arguments (`SafeValues`), and indents
tracebacks so none of their lines can pass for a record (`SafeFormatter`).

Every record carries the ids of what it belongs to (`ContextIds`, from `app.core.context`): in the
text format after the message, in the JSON format (`JSON_FORMAT`, `JAVAKB_LOG_FORMAT=json`: one
object per line) as fields. Whatever a message quotes, the configured secrets' values never reach
the stream: `Redact` replaces them in the formatted line (secrets are kept out of messages in the
first place; this is the net under that rule). It also masks credentials no setting names
(`mask_credentials`): a token in a query string (uvicorn's access line quotes the whole path, and
runs through this same handler), an OAuth `code` or `state`, an Authorization-like header, a bearer
or GitLab token. Text and JSON lines alike, since the mask applies to the formatted line.

Every line a library writes goes through that handler too: uvicorn (run with `log_config=None`),
fastmcp (whose import would install its own `rich` handlers, multi-line and not propagating) and
Python's `warnings` (captured as records of `py.warnings`), so a JSON stream holds nothing but JSON.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from app.core import context

MAX_VALUE_CHARS = 1000
TRACEBACK_INDENT = "  | "

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, and lone surrogates (which
# cannot even be written to a UTF-8 stream) become visible escapes.
_UNSAFE = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0xD800, 0xE000)]
_ESCAPES = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _UNSAFE}


def escape(value: str, limit: int = MAX_VALUE_CHARS) -> str:
    """`value` on one line, at most `limit` characters (plus a note of how many were cut)."""
    cut = value if len(value) <= limit else value[:limit]
    safe = cut.translate(_ESCAPES)
    return safe if cut is value else f"{safe}...[{len(value) - limit} more chars]"


def _safe_arg(value: object) -> object:
    if value is None or isinstance(value, int | float):  # keeps %d and %.2f working
        return value
    return escape(str(value))


class SafeValues(logging.Filter):
    """Escape and cap each record's message and arguments (installed on the handler: every record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place; never drops it."""
        record.msg = escape(str(record.msg), limit=4 * MAX_VALUE_CHARS)
        if isinstance(record.args, dict):
            record.args = {k: _safe_arg(v) for k, v in record.args.items()}
        elif record.args:
            record.args = tuple(_safe_arg(a) for a in record.args)
        return True


class SafeFormatter(logging.Formatter):
    """A formatter whose tracebacks and stacks are indented: a line that starts a record is always one."""

    def formatException(self, ei: Any) -> str:
        """The traceback with every line indented and escaped."""
        return _indent(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        """The stack with every line indented and escaped."""
        return _indent(super().formatStack(stack_info))


def _indent(text: str) -> str:
    return "\n".join(TRACEBACK_INDENT + escape(line) for line in text.splitlines())


class ContextIds(logging.Filter):
    """Put the context's ids on each record: `record.ids` (a dict) and `record.id_text` (` [project_id=12]`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate the record; never drops it."""
        ids = context.current()
        record.ids = ids
        record.id_text = " [" + " ".join(f"{k}={escape(v, 200)}" for k, v in ids.items()) + "]" if ids else ""
        return True


class JsonFormatter(SafeFormatter):
    """One JSON object per record: time, level, logger, message, the context's ids, and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON (json.dumps escapes every control character)."""
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "ids", {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


MIN_REDACTED = 4  # shorter values would cut ordinary words out of every line
REDACTED = "***"

# Credentials a line may quote without them being configured secrets: a query string's token
# (uvicorn's access line carries the full path: `?private_token=glpat-…`), an OAuth `code` or
# `state`, an Authorization-like header, a bearer token, a GitLab token by its prefix.
_SECRET_PARAM = r"[\w-]*(?:token|secret|password|passwd|api_key|apikey)"  # private_token, client_secret, ...
_CREDENTIALS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(rf"(?i)((?<![\w-])(?:{_SECRET_PARAM})=)[^&\s\"'\\#;,]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)([?&;](?:code|state|code_verifier|assertion|signature|sig)=)[^&\s\"'\\#;]+"), r"\1" + REDACTED),
    (
        re.compile(
            r"(?i)((?<![\w-])(?:proxy-)?authorization|private-token|job-token|deploy-token|x-gitlab-token|x-api-key"
            r"|api-key)([\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token)\s+)?[^\s\"',;]+"
        ),
        lambda m: m.group(1) + m.group(2) + (m.group(3) + " " if m.group(3) else "") + REDACTED,
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + REDACTED),
    (re.compile(r"\b(gl(?:pat|oas|dt|rt|cbt|ptt|ft|imt|agent|soat|ffct|wt))-[A-Za-z0-9_.-]{8,}"), r"\1-" + REDACTED),
)


def mask_credentials(line: str) -> str:
    """`line` with the value of every credential it quotes (`_CREDENTIALS`) replaced by `***`."""
    for pattern, replacement in _CREDENTIALS:
        line = pattern.sub(replacement, line)
    return line


class Redact(logging.Formatter):
    """Wraps a formatter: configured secrets' values, and credentials a line quotes, become `***`."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner
        self.secrets = sorted({s for s in secrets if len(s) >= MIN_REDACTED}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        """The inner formatter's line, with the secrets cut out."""
        line = self.inner.format(record)
        for secret in self.secrets:
            line = line.replace(secret, REDACTED)
        return mask_credentials(line)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(id_text)s"
JSON_FORMAT = "json"


def _formatter(fmt: str, secrets: tuple[str, ...]) -> logging.Formatter:
    inner: logging.Formatter = JsonFormatter() if fmt == JSON_FORMAT else SafeFormatter(TEXT_FORMAT)
    return Redact(inner, secrets)


def log_config(level: str, fmt: str = "text", secrets: Iterable[str] = ()) -> dict[str, Any]:
    """A dictConfig: one stream handler, timestamps, our packages at `level`, noisy libraries at WARNING.

    `fmt` is `text` or `json`; `secrets` are values the stream must never show.
    """
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"safe": {"()": SafeValues}, "ids": {"()": ContextIds}},
        "formatters": {"line": {"()": _formatter, "fmt": fmt, "secrets": tuple(secrets)}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "line", "filters": ["safe", "ids"]}},
        "loggers": {
            "entry": {"level": level},
            "app": {"level": level},
            "hooks": {"level": level},
            "pipeline": {"level": level},
            "mcp_server": {"level": level},
            "arq": {"level": level},
            # uvicorn runs with log_config=None: its lines use this handler. Its two children are named so that a
            # uvicorn configured earlier in the process (its own handlers, propagate off) passes through ours too.
            "uvicorn": {"level": level, "handlers": [], "propagate": True},
            "uvicorn.access": {"level": level, "handlers": [], "propagate": True},
            "uvicorn.error": {"level": level, "handlers": [], "propagate": True},
            # fastmcp configures its own `rich` handlers (multi-line, propagate off) when it is imported: named here
            # (handlers dropped, propagating) for a fastmcp imported earlier; `configure_logging` stops a later import.
            "fastmcp": {"level": level, "handlers": [], "propagate": True},
            "httpx": {"level": "WARNING"},
        },
        "root": {"level": "WARNING", "handlers": ["stderr"]},
    }


FASTMCP_LOG_ENABLED = "FASTMCP_LOG_ENABLED"
"""fastmcp's own setting: `false` keeps its import from installing its handlers (`fastmcp.utilities.logging`)."""


def configure_logging(level: str, fmt: str = "text", secrets: Iterable[str] = ()) -> None:
    """Apply `log_config` (entrypoints only): every line any library writes goes through its one handler.

    fastmcp (imported after this, by the web app) is told to leave its logger to us, and Python's
    `warnings` become records of `py.warnings` (through the same handler, not printed by `warnings`).
    """
    os.environ[FASTMCP_LOG_ENABLED] = "false"
    logging.config.dictConfig(log_config(level.upper(), fmt, secrets))
    logging.captureWarnings(True)
