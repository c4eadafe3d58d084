"""Logging configured once, from a pure `log_config(level)` passed to `dictConfig`."""

from __future__ import annotations

import logging.config
from typing import Any


def log_config(level: str) -> dict[str, Any]:
    """A dictConfig: one stream handler, timestamps, our packages at `level`, noisy libraries at WARNING."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
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
