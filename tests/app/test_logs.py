"""Logged values cannot forge log lines (issue 9)."""

from __future__ import annotations

import copy
import io
import logging
import logging.config
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from uvicorn.protocols.utils import get_path_with_query_string

from app.core.logs import MAX_VALUE_CHARS, REDACTED, TRACEBACK_INDENT, escape, log_config, mask_credentials

FORGED = "x\n2026-12-01 10:00:00,000 WARNING entry.web: admin token accepted\r\u2028"


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


def access_record(query: str) -> logging.LogRecord:
    """The record uvicorn's access logger makes for a request (its own format and path helper)."""
    scope: Any = {"path": "/api/v1/search", "query_string": query.encode(), "root_path": ""}
    args = ("203.0.113.9:51234", "GET", get_path_with_query_string(scope), "1.1", 200)
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', args, None)


def our_record(message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("app.gitlab", logging.WARNING, __file__, 1, message, args, None)


GLPAT = "glpat-Zx8Qw2Lm9Rt4Yp6Kd1Nv"
LEAKS: list[tuple[str, logging.LogRecord, str, str]] = [
    ("access private_token", access_record(f"q=owner&private_token={GLPAT}"), GLPAT, "q=owner"),
    ("access access_token", access_record("access_token=eyJhbGciOi.payload.sig&q=x"), "eyJhbGciOi", "q=x"),
    ("access oauth code and state", access_record("code=AbC123code&state=St4te99x"), "AbC123code", "/api/v1/search"),
    ("access oauth state", access_record("state=St4te99xyz&code=c0de"), "St4te99xyz", "state="),
    ("access token", access_record("token=plain-t0ken-value"), "plain-t0ken-value", "token="),
    ("access job_token", access_record("job_token=job-t0ken-value"), "job-t0ken-value", "job_token="),
    ("our url", our_record("GET %s failed", f"https://gl.example/api/v4/projects?private_token={GLPAT}"), GLPAT, "gl."),
    ("our header", our_record("sent %s", {"Authorization": "Bearer s3cr3tBearerValue"}), "s3cr3tBearerValue", "sent"),
    (
        "our private-token",
        our_record("header Private-Token: %s", "anyT0kenValue99"),
        "anyT0kenValue99",
        "Private-Token",
    ),
    ("our bearer", our_record("Authorization=Bearer %s", "s3cr3tBearerValue"), "s3cr3tBearerValue", "Bearer"),
    ("our basic", our_record("proxy said Basic %s", "dXNlcjpwYXNzd29yZA=="), "dXNlcjpwYXNzd29yZA", "Basic"),
    ("our glpat", our_record("token %s refused", GLPAT), GLPAT, "refused"),
    (
        "our oauth redirect",
        our_record("redirect to %s", "https://c/cb?code=Xy9code77&state=abcSTATE1"),
        "Xy9code77",
        "https://c/cb?",
    ),
]


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize(("record", "secret", "kept"), [row[1:] for row in LEAKS], ids=[row[0] for row in LEAKS])
def test_credentials_quoted_in_a_line_are_masked(fmt: str, record: logging.LogRecord, secret: str, kept: str) -> None:
    out = io.StringIO()
    config = log_config("INFO", fmt)
    config["handlers"]["stderr"]["stream"] = out
    config["loggers"] = {"tests.masked": {"level": "INFO", "handlers": ["stderr"], "propagate": False}}
    del config["root"]
    logging.config.dictConfig(config)
    try:
        logging.getLogger("tests.masked").handle(copy.copy(record))
    finally:
        logging.getLogger("tests.masked").handlers.clear()
    line = out.getvalue()
    assert secret not in line and REDACTED in line, line
    assert kept in line  # the rest of the line stays readable
    assert "state=St4te99xyz" not in line and "AbC123code" not in line


def test_ordinary_words_are_not_masked() -> None:
    line = "project 12 state=queued, exit code 3, tokens=120 of 8000, GET /api/v1/search?q=token HTTP/1.1"
    assert mask_credentials(line) == line


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_real_uvicorn_access_line_is_masked(fmt: str) -> None:
    """uvicorn run as `javakb web` runs it (`log_config=None`): its access line reaches our handler, masked."""
    out = io.StringIO()
    config = log_config("INFO", fmt)
    config["handlers"]["stderr"]["stream"] = out
    root = logging.getLogger()
    kept = (root.handlers[:], root.level)
    logging.config.dictConfig(config)  # the root handler, as in production
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    app = Starlette(routes=[Route("/api/v1/search", lambda request: PlainTextResponse("ok"))])
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=True, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        port = sock.getsockname()[1]
        answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/search?q=owner&private_token={GLPAT}&code=c0de99x")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        root.handlers[:], root.level = kept[0], kept[1]
        logging.getLogger("uvicorn").setLevel(logging.NOTSET)
    access = [line for line in out.getvalue().splitlines() if "/api/v1/search" in line]
    assert answer.status_code == 200 and len(access) == 1, out.getvalue()
    assert GLPAT not in access[0] and "c0de99x" not in access[0]
    assert f"q=owner&private_token={REDACTED}&code={REDACTED}" in access[0]
