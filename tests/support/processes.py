"""Real processes for failure scenarios: `javakb serve` as a subprocess, and a private redis-server.

`ServeProcess` runs the installed `javakb serve` with its configuration in `JAVAKB_*` variables (as a
deployment does), so it can be stopped with SIGTERM or killed with SIGKILL. `RedisServer` runs its
own `redis-server` on a free loopback port without persistence, so a test can stop and restart
Redis (losing everything in it, as a restart without persistence does) without touching the
shared one.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx

START_TIMEOUT_S = 60.0


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(check: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)  # polling another process: there is no event to wait on
    raise AssertionError(f"{what} within {timeout} s")


class RedisServer:
    """A redis-server of the test's own on a free port; `stop()` and `start()` it at will."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed (scripts/services installs it)"
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self._process = subprocess.Popen(
            [*args, "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _wait(self._answers, f"redis-server on port {self.port} did not answer", 10)

    def stop(self) -> None:
        """Stop it abruptly (SIGKILL): whatever it held is lost."""
        if self._process is not None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait(10)
            self._process = None

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


class ServeProcess:
    """`javakb serve` in a subprocess with the given `JAVAKB_*` environment."""

    def __init__(self, env: Mapping[str, str], log: Path) -> None:
        self.port = free_port()
        self.env = {**os.environ, **env, "JAVAKB_PORT": str(self.port), "JAVAKB_HOST": "127.0.0.1"}
        self.log = log
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        javakb = Path(sys.executable).with_name("javakb")
        with self.log.open("ab") as out:
            self._process = subprocess.Popen([str(javakb), "serve"], env=self.env, stdout=out, stderr=out)
        _wait(self._healthy, f"javakb serve did not answer /healthz (log: {self.log})", START_TIMEOUT_S)

    def kill(self) -> None:
        """SIGKILL: no cleanup at all, as the OOM killer or a node loss."""
        self._signal(signal.SIGKILL)

    def terminate(self) -> None:
        """SIGTERM: a graceful stop."""
        self._signal(signal.SIGTERM)

    def _signal(self, sig: signal.Signals) -> None:
        if self._process is not None:
            self._process.send_signal(sig)
            self._process.wait(30)
            self._process = None

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30)

    def post(self, path: str, body: object, headers: Mapping[str, str]) -> httpx.Response:
        return httpx.post(self.url + path, json=body, headers=dict(headers), timeout=30)

    def _healthy(self) -> bool:
        assert self._process is not None
        if self._process.poll() is not None:
            raise AssertionError(f"javakb serve exited with {self._process.returncode} (log: {self.log})")
        try:
            return self.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False
