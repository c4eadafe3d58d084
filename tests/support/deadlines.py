"""Every test phase ends: the test's deadline (pytest-timeout's) and one of each teardown escalate until it does.

pytest-timeout's signal method raises `Failed` from SIGALRM in whatever frame runs. Inside an event loop that is
often a task's step, and the task keeps the exception as its result: the test goes on waiting for what that task
was doing, and no second alarm comes. pytest-timeout also cancels its timer as soon as a phase fails
(`pytest_exception_interact`), so the teardown after a failure (pytest-asyncio cancelling the test's tasks, async
fixtures' exits) has no bound at all. This plugin implements pytest-timeout's timer hooks (its documented way to
replace the strategy; the `timeout` marker and ini value still set the seconds) and gives each teardown a
deadline of its own (`teardown_timeout`). At a deadline:

1. the stacks of every thread and every pending asyncio task go to stderr; if an event loop runs, all its tasks are
   cancelled (the test unwinds through its own `finally` blocks and context managers); without one, `Failed` is
   raised, as pytest-timeout does;
2. `timeout_grace` seconds later, still running: the loop is stopped and `Failed` raised, so the phase ends failed
   and the session goes on with the next test;
3. `timeout_grace` seconds after that (something swallowed both): faulthandler writes every thread's stack and
   exits the process with status 1.

And once the session is over, the interpreter's exit (joining threads left running) gets `exit_timeout` seconds
before the same hard exit. `tests/test_deadlines.py` proves each step in a pytest of its own.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import signal
import sys
import threading
import traceback
from collections.abc import Generator
from dataclasses import dataclass
from types import FrameType
from typing import Any

import pytest

INI = {
    "teardown_timeout": ("Seconds each test's teardown may take before its deadline escalates", "60"),
    "timeout_grace": ("Seconds between the steps of an escalating deadline (cancel, stop, exit)", "30"),
    "exit_timeout": ("Seconds the interpreter's exit may take after the session before a hard exit", "60"),
}
DEADLINE = pytest.StashKey["Deadline"]()
STDERR = pytest.StashKey[int]()  # the terminal's stderr: fd 2 is pytest's capture file while a test runs


def pytest_addoption(parser: pytest.Parser) -> None:
    for name, (help_text, default) in INI.items():
        parser.addini(name, help_text, default=default)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[STDERR] = os.dup(sys.__stderr__.fileno() if sys.__stderr__ else 2)  # capture is suspended here


def seconds(config: pytest.Config, name: str) -> float:
    return float(config.getini(name))


@dataclass
class Deadline:
    """An escalating SIGALRM deadline for one phase of one test (the main thread's)."""

    item: pytest.Item
    what: str
    seconds: float
    grace_s: float
    step: int = 0
    reported: bool = False

    def arm(self) -> None:
        signal.signal(signal.SIGALRM, self._fire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def disarm(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        faulthandler.cancel_dump_traceback_later()

    def _write(self, headline: str, details: str) -> None:
        text = f"\n{'+' * 20} {headline}\n{details}\n{'+' * 20}\n"
        os.write(self.item.config.stash[STDERR], text.encode(errors="replace"))

    def _fire(self, signum: int, frame: FrameType | None) -> None:
        self.step += 1
        loop = asyncio._get_running_loop()  # the main thread's: signal handlers run there
        message = f"{self.item.nodeid}: {self.what}"
        if self.step == 1:
            self._write(f"{message}: {'cancelling its tasks' if loop else 'interrupting it'}", _stacks(loop))
            signal.setitimer(signal.ITIMER_REAL, self.grace_s)
            if loop is not None:
                loop.call_soon_threadsafe(_cancel_all, loop, message)
                return
            pytest.fail(message, pytrace=False)
        self._write(f"{message}: still running {self.grace_s} s later; stopping it", _stacks(loop))
        stderr = self.item.config.stash[STDERR]
        faulthandler.dump_traceback_later(self.grace_s, exit=True, file=stderr)  # if this is swallowed too
        if loop is not None:
            loop.stop()  # run_until_complete returns at the end of this iteration, whatever the tasks do
        pytest.fail(f"{message}; its tasks did not end when cancelled", pytrace=False)


def _cancel_all(loop: asyncio.AbstractEventLoop, message: str) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel(message)


def _stacks(loop: asyncio.AbstractEventLoop | None) -> str:
    """Every other thread's stack and every pending task's."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = [
        f"--- thread {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()
        if ident != threading.get_ident()
    ]
    for task in asyncio.all_tasks(loop) if loop is not None else ():
        frames = "".join(line for f in task.get_stack() for line in traceback.format_stack(f, limit=1))
        parts.append(f"--- task {task.get_name()} ({task.get_coro()!r})\n{frames}")
    return "\n".join(parts)


def _usable(settings: Any) -> bool:
    """The signal strategy applies: asked for (the default on POSIX), and in the main thread."""
    return bool(settings.method == "signal" and threading.current_thread() is threading.main_thread())


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool | None:
    if not _usable(settings):
        return None  # pytest-timeout's own thread method
    deadline = Deadline(
        item, f"Timeout (>{settings.timeout} s)", settings.timeout, seconds(item.config, "timeout_grace")
    )
    item.stash[DEADLINE] = deadline
    deadline.arm()
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> bool | None:
    deadline = item.stash.get(DEADLINE, None)
    if deadline is None:
        return None
    deadline.disarm()
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    """A deadline of the teardown's own, whether the test passed, failed or timed out."""
    if threading.current_thread() is not threading.main_thread():
        return (yield)
    previous = item.stash.get(DEADLINE, None)
    if previous is not None:
        previous.disarm()
    limit = seconds(item.config, "teardown_timeout")
    deadline = Deadline(item, f"teardown over {limit} s", limit, seconds(item.config, "timeout_grace"))
    item.stash[DEADLINE] = deadline
    deadline.arm()
    try:
        return (yield)
    finally:
        deadline.disarm()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """The phase a deadline cut fails, even when the test swallowed the cancellation and then passed."""
    report = yield
    deadline = item.stash.get(DEADLINE, None)
    if deadline is not None and deadline.step and not deadline.reported:
        deadline.reported = True  # the first phase to end after the deadline fired is the one it cut
        if report.passed:
            report.outcome = "failed"
            report.longrepr = f"{item.nodeid}: {deadline.what} (its cancellation was swallowed, then it passed)"
        else:  # a bare CancelledError does not say why it came
            report.sections.append(("deadline", f"{item.nodeid}: {deadline.what}: its tasks were cancelled"))
    return report


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """The interpreter's exit joins every thread still running: bounded too (a C watchdog, stacks, status 1)."""
    if threading.current_thread() is threading.main_thread() and not hasattr(config, "workerinput"):
        stderr = config.stash[STDERR]  # left open: the watchdog writes to it while the interpreter exits
        faulthandler.dump_traceback_later(seconds(config, "exit_timeout"), exit=True, file=stderr)
