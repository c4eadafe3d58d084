"""With `JAVAKB_LOG_FORMAT=json` every line the process writes is one JSON object with our fields (issue 27).

fastmcp installs its own `rich` handlers when it is imported (multi-line, wrapped, not propagating), and
Python's `warnings` print themselves on two lines: both bypassed the one handler. Here a real
`javakb serve` (subprocess, embedded store, lexical-only) is asked over HTTP: an MCP tool call with
invalid arguments (fastmcp's warning), a request whose query string quotes a token (uvicorn's access
line, masked). A fresh interpreter configures logging and imports the MCP server (in either order:
the entry points configure first), then warns and logs through fastmcp, with and without a
traceback. Every non-empty line must parse.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Final

import pytest
from fastmcp import Client

from tests.conftest import REDIS
from tests.support.processes import ServeProcess
from tests.support.tokens import service_token

pytestmark = pytest.mark.integration

ROOT: Final = Path(__file__).resolve().parents[2]
TOKEN: Final = "json-logs-test-token-" + "x" * 24
LEAKED: Final = "glpat-abcdefghij0123456789"
FIELDS: Final = {"time", "level", "logger", "message"}


def parsed(text: str) -> list[dict[str, Any]]:
    """Every non-empty line as JSON with our fields; an assertion naming the first line that is not."""
    lines = []
    for line in filter(str.strip, text.splitlines()):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON line: {line!r}\n--- whole output ---\n{text}") from None
        assert isinstance(record, dict) and record.keys() >= FIELDS, line
        lines.append(record)
    return lines


async def _invalid_tool_call(mcp_url: str) -> None:
    async with Client(mcp_url, auth=TOKEN) as client:
        result = await client.call_tool("get_symbol", {}, raise_on_error=False)  # `name` is required
        assert result.is_error


def test_a_served_process_writes_only_json_lines(tmp_path: Path, pg_dsn: str) -> None:
    tokens = json.dumps([service_token(TOKEN).model_dump()])
    env = {
        "JAVAKB_QDRANT__PATH": str(tmp_path / "kb"),
        "JAVAKB_EMBEDDING__PROVIDER": "none",
        "JAVAKB_POSTGRES__DSN": pg_dsn,
        "JAVAKB_REDIS__URL": REDIS,
        "JAVAKB_REDIS__QUEUE": f"javakb:test:{uuid.uuid4().hex[:8]}",
        "JAVAKB_DEV_MODE": "true",
        "JAVAKB_LOG_FORMAT": "json",
        "JAVAKB_LOG_LEVEL": "INFO",
        "JAVAKB_SERVICE_TOKENS": tokens,
        "FASTMCP_LOG_ENABLED": "true",  # an operator's fastmcp setting does not bring its own handlers back
    }
    log = tmp_path / "serve.log"
    serve = ServeProcess(env, log)
    try:
        serve.start()
        assert serve.get(f"/healthz?private_token={LEAKED}").status_code == 200
        asyncio.run(_invalid_tool_call(serve.url + "/mcp"))
    finally:
        serve.terminate()
    text = log.read_text()
    records = parsed(text)
    assert LEAKED not in text
    access = [r for r in records if r["logger"] == "uvicorn.access"]
    assert any("/healthz?private_token=***" in r["message"] for r in access), access
    tool = [r for r in records if r["logger"].startswith("fastmcp") and "get_symbol" in r["message"]]
    assert tool and tool[0]["level"] == "WARNING", records
    assert any(r["message"] == "Application shutdown complete." for r in records)  # the stop is logged too


CONFIGURE: Final = 'from app.core.logs import configure_logging\nconfigure_logging("INFO", "json", ["s3cr3t-value"])\n'
IMPORT: Final = "import mcp_server.server\n"  # imports fastmcp (which installs its handlers unless told not to)
SCRIPT: Final = """
import logging, warnings
{first}{then}
warnings.warn("a library's warning\\nwith a second line s3cr3t-value")
logging.getLogger("fastmcp.server").warning("fastmcp says\\nsomething long " + "y" * 300)
try:
    raise ValueError("boom")
except ValueError:
    logging.getLogger("fastmcp.server").exception("a failure with a traceback")
print("done", flush=True)
"""


@pytest.mark.parametrize("fastmcp_first", [False, True], ids=["configured-first", "fastmcp-first"])
def test_warnings_and_fastmcp_write_json_whichever_is_imported_first(fastmcp_first: bool) -> None:
    """The entry points configure logging first, then import the web app; fastmcp imported before is covered too."""
    env = {**os.environ, "FASTMCP_LOG_ENABLED": "true"}
    first, then = (IMPORT, CONFIGURE) if fastmcp_first else (CONFIGURE, IMPORT)
    script = SCRIPT.format(first=first, then=then)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    records = parsed(run.stderr)
    by_logger = {r["logger"]: r for r in records}
    assert "a library's warning" in by_logger["py.warnings"]["message"]
    assert "s3cr3t-value" not in run.stderr
    fastmcp = [r for r in records if r["logger"] == "fastmcp.server"]
    assert [r["level"] for r in fastmcp] == ["WARNING", "ERROR"]
    assert "ValueError: boom" in fastmcp[1]["exception"]
