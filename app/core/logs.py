"""Logging configured once, from a pure `log_config(level)` passed to `dictConfig`.

Logged values come from outside (headers, payload fields, error messages that quote input): one
newline in a value would forge a whole log line. The one handler therefore escapes control
characters and caps the length of every record's message and arguments (`SafeValues`), and indents
tracebacks so none of their lines can pass for a record (`SafeFormatter`).
"""

from __future__ import annotations

import logging
import logging.config
from typing import Any

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


def log_config(level: str) -> dict[str, Any]:
    """A dictConfig: one stream handler, timestamps, our packages at `level`, noisy libraries at WARNING."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"safe": {"()": SafeValues}},
        "formatters": {"plain": {"()": SafeFormatter, "format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["safe"]}},
        "loggers": {
            "app": {"level": level},
            "hooks": {"level": level},
            "pipeline": {"level": level},
            "mcp_server": {"level": level},
            "arq": {"level": level},
            "httpx": {"level": "WARNING"},
        },
        "root": {"level": "WARNING", "handlers": ["stderr"]},
    }


def configure_logging(level: str) -> None:
    """Apply `log_config` (entrypoints only)."""
    logging.config.dictConfig(log_config(level.upper()))
