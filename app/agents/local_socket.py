"""Where `javakb serve` listens, and the blocking clients of its socket: the CLI's and the agent hooks'.

The socket and its protocol are `entry.local_api`'s (one JSON request a connection, answered with JSON
lines ending in `{"result": ...}` or `{"error": ...}`). This module holds only what a client needs, with
the standard library alone: an agent hook runs before every prompt, so it must start fast and must
never wait long (`request` gives up after `timeout_s`, whatever the service is doing); `javakb search`,
`context` and `index` ask through `ask` before they import anything that opens the store themselves
(docs/performance.md, "javakb search through serve's socket").
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import ServiceError

if TYPE_CHECKING:  # not imported at run time: the hook starts without pydantic (docs/performance.md)
    from app.core.settings import QdrantSettings

SOCKET_NAME = "javakb.sock"
MAX_ANSWER_BYTES = 16 * 1024 * 1024
Progress = Callable[[int, int], None]
"""Told `(done, total)` at each `{"progress": ...}` line of an answer (`javakb index`'s files)."""


class UnreachableError(ServiceError):
    """No `javakb serve` answered on the socket in time (none runs, or it is busy)."""


def socket_path(settings: QdrantSettings) -> Path | None:
    """Where `serve` listens: in the embedded store's folder (None for a server or a `:memory:` store)."""
    if settings.url or settings.path == ":memory:":
        return None
    return Path(settings.path).resolve() / SOCKET_NAME


def request(path: Path, message: dict[str, Any], timeout_s: float) -> Any:
    """Send one request to `javakb serve` and return its result, all within `timeout_s` seconds.

    Raises:
        UnreachableError: nothing listens on `path`, or no whole answer came in time.
        ServiceError: the service refused the request (its message).
    """
    deadline = time.monotonic() + timeout_s
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout_s)
            conn.connect(str(path))
            conn.sendall(json.dumps(message).encode() + b"\n")
            return _result(_lines(conn, deadline))
    except (OSError, ValueError) as exc:  # refused, missing, timed out, or cut off mid-answer
        raise UnreachableError(f"javakb serve did not answer on {path}: {exc}") from exc


def ask(path: Path | None, message: dict[str, Any], progress: Progress | None = None) -> Any:
    """Send one request to `javakb serve` and wait for its result however long the service works on it.

    Returns `None` when no service listens on `path` (no socket, or one a killed service left behind):
    the caller opens the store itself then.

    Raises:
        ServiceError: the service refused the request (its message), or the connection failed.
    """
    if path is None:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        except OSError as exc:
            raise ServiceError(f"cannot connect to javakb serve on {path}: {exc}") from exc
        try:
            conn.sendall(json.dumps(message).encode() + b"\n")
            return _streamed(conn, progress)
        except (OSError, ValueError) as exc:
            raise ServiceError(f"javakb serve on {path} did not answer: {exc}") from exc


def _streamed(conn: socket.socket, progress: Progress | None) -> Any:
    with conn.makefile("rb") as answer:
        while line := answer.readline(MAX_ANSWER_BYTES + 1):
            if len(line) > MAX_ANSWER_BYTES:
                raise ValueError("the answer is too long")
            done, result = _read(line, progress)
            if done:
                return result
    raise ValueError("the connection closed without an answer")


def _lines(conn: socket.socket, deadline: float) -> list[bytes]:
    received = bytearray()
    while not received.endswith(b"\n") or (b'"result"' not in received and b'"error"' not in received):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no whole answer in time")
        conn.settimeout(left)
        chunk = conn.recv(65536)
        if not chunk:
            break
        received += chunk
        if len(received) > MAX_ANSWER_BYTES:
            raise ValueError("the answer is too long")
    return [line for line in bytes(received).splitlines() if line.strip()]


def _result(lines: list[bytes]) -> Any:
    for line in lines:
        done, result = _read(line, None)
        if done:
            return result
    raise ValueError("the connection closed without an answer")


def _read(line: bytes, progress: Progress | None) -> tuple[bool, Any]:
    """One line of an answer: `(True, result)` at its end, `(False, None)` for progress (told to `progress`)."""
    answer = json.loads(line)
    if "error" in answer:
        raise ServiceError(f"javakb serve answered: {answer['error']}")
    if "result" in answer:
        return True, answer["result"]
    if "progress" in answer and progress is not None:
        progress(*answer["progress"])
    return False, None
