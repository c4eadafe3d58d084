"""A real headless Chromium driven over the DevTools protocol (CDP), for tests of the operator's page.

Debian's `chromium` (installed by `scripts/services`) is started with `--remote-debugging-port=0`; the
port it chose is read from `DevToolsActivePort` in its profile folder, and one page target is driven
over a WebSocket (`websockets`' synchronous client): navigate, read the text, type, submit, read the
cookies, take a screenshot. Nothing is downloaded at run time. Every wait has a deadline.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
from websockets.sync.client import ClientConnection, connect

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
START_TIMEOUT_S = 30.0
T = TypeVar("T")


def chromium_path() -> str | None:
    """The Chromium on the PATH, if any."""
    return next((found for name in CHROMIUM if (found := shutil.which(name))), None)


class Page:
    """One tab: CDP commands over its WebSocket, answers matched by id (events are skipped)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)

    def send(self, method: str, timeout_s: float = 30.0, **params: Any) -> dict[str, Any]:
        """Run one command; its result (a CDP error raises)."""
        sent = next(self._ids)
        self.ws.send(json.dumps({"id": sent, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (DevTools' evaluation, not the page's scripts)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        """Load `url` and wait until the document is complete."""
        self.send("Page.navigate", url=url)
        self.wait_for(lambda: self.evaluate("document.readyState") == "complete" and self.url() != "about:blank")

    def url(self) -> str:
        return str(self.evaluate("location.href"))

    def text(self) -> str:
        """What the page shows (`innerText` of its body)."""
        return str(self.evaluate("document.body ? document.body.innerText : ''"))

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element and type `text` as keyboard input."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", text=text)

    def press_enter(self) -> None:
        """Press and release Enter in the focused element (submits its form)."""
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13, text="\r"
            )

    def cookies(self) -> list[dict[str, Any]]:
        cookies: list[dict[str, Any]] = self.send("Network.getCookies")["cookies"]
        return cookies

    def screenshot(self, path: Path) -> Path:
        """A PNG of the viewport, written to `path`."""
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
        return path

    def wait_for(self, check: Callable[[], T], timeout_s: float = 30.0, what: str = "the page") -> T:
        """Poll `check` until it returns a truthy value, or fail at the deadline (a navigation in flight is retried)."""
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                value = check()
                if value:
                    return value
            except RuntimeError as exc:  # the context was replaced by a navigation: ask again
                last = exc
            time.sleep(0.05)
        raise AssertionError(f"{what}: not there within {timeout_s} s (last error: {last}); shows:\n{self._shown()}")

    def _shown(self) -> str:
        try:
            return f"{self.url()}\n{self.text()[:2000]}"
        except RuntimeError as exc:
            return str(exc)


@contextmanager
def chromium(profile: Path, *, width: int = 1280, height: int = 900) -> Iterator[Page]:
    """A headless Chromium with a fresh profile under `profile`; its first tab."""
    binary = chromium_path()
    assert binary, "chromium is not installed: run scripts/services (Debian: apt-get install chromium)"
    profile.mkdir(parents=True, exist_ok=True)
    args = [
        binary,
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        f"--user-data-dir={profile}",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "about:blank",
    ]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")  # Chromium refuses to start its sandbox as root
    log = (profile / "chromium.log").open("wb")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        port = _devtools_port(profile, process)
        page_url = _page_socket(port)
        with connect(page_url, max_size=64 * 1024 * 1024, open_timeout=START_TIMEOUT_S) as ws:
            page = Page(ws)
            page.send("Page.enable")
            page.send("Network.enable")
            yield page
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def _devtools_port(profile: Path, process: subprocess.Popen[bytes]) -> int:
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"chromium exited ({process.returncode}): {(profile / 'chromium.log').read_text()[-2000:]}"
            )
        lines = marker.read_text().splitlines() if marker.exists() else []
        if lines and lines[0].isdigit():
            return int(lines[0])
        time.sleep(0.05)
    raise TimeoutError(f"chromium did not open its DevTools port within {START_TIMEOUT_S} s")


def _page_socket(port: int) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json()
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            return str(pages[0]["webSocketDebuggerUrl"])
        time.sleep(0.05)
    raise TimeoutError(f"chromium showed no page target within {START_TIMEOUT_S} s")
