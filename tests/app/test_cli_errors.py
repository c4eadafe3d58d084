"""A bad value or a service that is down: one message naming the setting, what was tried and the fix; exit non-zero.

The traceback only with `--debug`. `migrate` and `doctor` run in-process through the CLI's `main`;
`serve` runs as the installed console script (it configures logging and runs its own event loop), against
ports where nothing listens.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from entry.cli import main
from tests.support.processes import free_port

SERVE_TIMEOUT_S = 120  # arq retries its first connection for ~5 s; the start itself is slow under load


def test_an_invalid_value_names_its_variable_and_never_crashes_doctor(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JAVAKB_WORKER__MAX_JOBS", "four")

    code = main(["doctor"])

    err = capsys.readouterr().err
    assert code == 2
    assert "JAVAKB_WORKER__MAX_JOBS='four'" in err and "valid integer" in err
    assert "Traceback" not in err


def test_migrate_with_postgresql_down_says_where_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JAVAKB_POSTGRES__DSN", f"postgresql://root:hunter2-pw@127.0.0.1:{free_port()}/javakb")

    code = main(["migrate"])

    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1, err  # one message
    assert "PostgreSQL at 127.0.0.1:" in err and "JAVAKB_POSTGRES__DSN" in err and "scripts/services" in err
    assert "Traceback" not in err and "hunter2-pw" not in err


def test_debug_adds_the_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JAVAKB_POSTGRES__DSN", f"postgresql://root@127.0.0.1:{free_port()}/javakb")

    code = main(["--debug", "migrate"])

    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" in err and "psycopg.OperationalError" in err
    assert err.rstrip().splitlines()[-1].startswith("javakb migrate: PostgreSQL at 127.0.0.1:")


def serve(tmp_path: Path, pg_dsn: str, command: str = "serve", **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "javakb"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAVAKB_")}
    environ |= {
        "JAVAKB_DEV_MODE": "true",
        "JAVAKB_PORT": str(free_port()),
        "JAVAKB_QDRANT__PATH": str(tmp_path / "qdrant"),
        "JAVAKB_POSTGRES__DSN": pg_dsn,
        "JAVAKB_EMBEDDING__PROVIDER": "none",
    } | env
    return subprocess.run(
        [str(script), command], env=environ, capture_output=True, text=True, timeout=SERVE_TIMEOUT_S, check=False
    )


def test_serve_with_postgresql_down_prints_one_message_and_warns_of_a_misspelt_variable(tmp_path: Path) -> None:
    down = f"postgresql://root@127.0.0.1:{free_port()}/javakb"

    done = serve(tmp_path, down, JAVAKB_GITLAB_URL="https://gitlab.example.com")

    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    [message] = [line for line in done.stderr.splitlines() if line.startswith("javakb serve:")]
    assert "PostgreSQL at 127.0.0.1:" in message and "JAVAKB_POSTGRES__DSN" in message
    assert "scripts/services" in message
    assert "JAVAKB_GITLAB_URL is not a setting and is ignored: did you mean JAVAKB_GITLAB__URL?" in done.stderr


def test_serve_with_redis_down_prints_one_message(tmp_path: Path, pg_dsn: str) -> None:
    done = serve(tmp_path, pg_dsn, JAVAKB_REDIS__URL=f"redis://127.0.0.1:{free_port()}/0")

    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    [message] = [line for line in done.stderr.splitlines() if line.startswith("javakb serve:")]
    assert "Redis at 127.0.0.1:" in message and "JAVAKB_REDIS__URL" in message and "scripts/services" in message


def test_web_with_postgresql_down_prints_one_message(tmp_path: Path) -> None:
    down = f"postgresql://root@127.0.0.1:{free_port()}/javakb"

    done = serve(tmp_path, down, "web", JAVAKB_QDRANT__URL=f"http://127.0.0.1:{free_port()}")

    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    [message] = [line for line in done.stderr.splitlines() if line.startswith("javakb web:")]
    assert "PostgreSQL at 127.0.0.1:" in message and "JAVAKB_POSTGRES__DSN" in message
