"""Logged values cannot forge log lines (issue 9)."""

from __future__ import annotations

import io
import logging
import logging.config
from collections.abc import Iterator

import pytest

from app.core.logs import MAX_VALUE_CHARS, TRACEBACK_INDENT, escape, log_config

FORGED = "x\n2026-12-01 10:00:00,000 WARNING app.web: admin token accepted\r\u2028"


@pytest.fixture
def logged() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    # The handler exactly as log_config builds it, writing to a buffer instead of stderr.
    out = io.StringIO()
    config = log_config("INFO")
    config["handlers"]["stderr"]["stream"] = out
    config["loggers"] = {"tests.forged": {"level": "INFO", "handlers": ["stderr"], "propagate": False}}
    del config["root"]  # leave the root logger (and pytest's capture) alone
    logging.config.dictConfig(config)
    logger = logging.getLogger("tests.forged")
    yield logger, out
    logger.handlers.clear()
    logger.propagate = True


def test_newlines_in_arguments_and_messages_stay_on_one_line(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, out = logged
    logger.info("delivery %s -> %s (%d ms, %.1f)", FORGED, ValueError(FORGED), 3, 1.25)
    logger.warning(FORGED)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert "\\x0a2026-12-01" in lines[0]
    assert lines[0].endswith("(3 ms, 1.2)")


def test_a_traceback_cannot_pass_for_a_record(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, out = logged
    try:
        raise RuntimeError(FORGED)
    except RuntimeError:
        logger.exception("job failed")
    first, *rest = out.getvalue().splitlines()
    assert first.endswith("job failed")
    assert rest and all(line.startswith(TRACEBACK_INDENT) for line in rest)


def test_long_values_are_capped_and_say_so() -> None:
    text = escape("a" * (MAX_VALUE_CHARS + 5))
    assert text == "a" * MAX_VALUE_CHARS + "...[5 more chars]"
    assert escape("\ud800 é") == "\\ud800 é"  # a lone surrogate cannot even be written to a UTF-8 stream
