"""Every command block of README.md and docs/*.md runs as written, or says why not (`tests/docs/blocks.py`).

Each document's checked blocks run in one bash session, in a temporary folder that links the checkout's
top-level entries (so `.venv/bin/javakb`, `scripts/`, `tests/fixtures/` resolve, and what the commands
write, such as `.javakb/` or a token file, stays in the folder), with `.venv/bin` and a `kubectl`
stand-in (`kubectl_shim.py`) first on PATH, HOME in the folder, and the test's own PostgreSQL database,
Redis database and a free port instead of 8080. The session is its own process group, killed at the
end (a `serve` it started too), and has a deadline.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.settings import EmbeddingSettings
from pipeline.model import ChunkerConfig
from tests.conftest import REDIS
from tests.docs.blocks import Block, blocks, script, statements
from tests.support.contract import TOOL_NAMES
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
MODEL_CACHE = Path(EmbeddingSettings().model_cache).expanduser()
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEADLINE_S = 420
MIN_RUN = 12
"""At least this many blocks run: a marker typo or a renamed document cannot quietly turn the test off."""


def every_block() -> list[Block]:
    return [b for doc in DOCS for b in blocks(doc)]


def test_every_command_block_is_marked_check_or_skip_with_a_reason() -> None:
    unmarked = [f"{b.doc.relative_to(ROOT)}:{b.line}" for b in every_block() if b.marker is None]
    assert unmarked == [], "put <!-- check --> or <!-- skip: REASON --> before each block"
    assert sum(b.runs for b in every_block()) >= MIN_RUN


def test_expected_output_lines_belong_to_the_command_before_them() -> None:
    parsed = statements('curl -s a \\\n  -H b\n#> {"ok": true}\n#>\necho x\n')
    assert parsed == [("curl -s a \\\n  -H b", ['{"ok": true}', ""]), ("echo x", [])]


def test_a_command_whose_output_differs_from_the_doc_fails_its_document(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- check -->\n```sh\necho one\n#> one\necho two\n#> three\n```\n", encoding="utf-8")
    command = ["bash", "-c", script(blocks(doc), 1)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert run.returncode == 97
    assert "expected\nthree\ngot\ntwo" in run.stderr


def session(folder: Path, text: str, pg_dsn: str, port: int) -> subprocess.CompletedProcess[str]:
    """Run `text` in bash in `folder` as its own process group; kill the group afterwards."""
    for entry in ROOT.iterdir():
        if entry.name not in (".git", ".javakb"):
            (folder / entry.name).symlink_to(entry)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAVAKB_")}
    env |= {
        "PATH": f"{ROOT / 'tests' / 'docs' / 'bin'}:{ROOT / '.venv' / 'bin'}:{env['PATH']}",
        "HOME": str(folder / "home"),
        "JAVAKB_EMBEDDING__MODEL_CACHE": str(MODEL_CACHE),  # the table scripts/bootstrap distilled, not a new one
        "PYTHONPATH": str(ROOT),
        "JAVAKB_DOCS_PYTHON": sys.executable,
        "JAVAKB_POSTGRES__DSN": pg_dsn,
        "JAVAKB_REDIS__URL": REDIS,
        "JAVAKB_PORT": str(port),
    }
    (folder / "home").mkdir()
    process = subprocess.Popen(
        ["bash", "-c", text], cwd=folder, env=env, text=True, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        err += f"\n(killed after {DEADLINE_S} s)"
    finally:
        stop_group(process.pid)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def stop_group(pgid: int, grace_s: float = 20.0) -> None:
    """SIGTERM to what is left of the session's process group (a server), SIGKILL after `grace_s`."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


RUNNING_DOCS = sorted({b.doc for b in every_block() if b.runs}, key=str)


@pytest.mark.timeout(DEADLINE_S + 60)
@pytest.mark.parametrize("doc", RUNNING_DOCS, ids=lambda d: d.name)
def test_the_checked_blocks_of_a_document_run(doc: Path, pg_dsn: str, tmp_path: Path) -> None:
    port = free_port()
    run = session(tmp_path, script(blocks(doc), port), pg_dsn, port)
    assert run.returncode == 0, f"{doc.name}:\n{run.stderr[-4000:]}\n{run.stdout[-2000:]}"


def test_cursor_s_page_gives_the_server_s_tool_count() -> None:
    # The count its checked block prints comes from the server (`tools/list`); the prose must say the same.
    text = (ROOT / "docs" / "cursor.md").read_text(encoding="utf-8")
    assert f"should then show {len(TOOL_NAMES)} tools" in text
    assert f"#> {len(TOOL_NAMES)} tools" in text


def test_the_readme_names_what_the_default_scope_leaves_out() -> None:
    # "What is indexed" restates the pipeline's default globs for readers: it must name each of them.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("**What is indexed.**") :].split("\n\n", 1)[0]
    defaults = ChunkerConfig()
    assert [g for g in defaults.include if g.split("/**")[0].strip("*/") not in paragraph] == []
    assert [g for g in defaults.exclude if g.strip("*/") + "/" not in paragraph] == []
    assert "Test code is not indexed by default" in paragraph
