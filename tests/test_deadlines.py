"""The suite's deadlines (tests/support/deadlines.py), each proved in a pytest of its own run in a subprocess.

A test or teardown that never ends must be cut, named, and the session must go on (or, when even that is
swallowed, the process must exit loudly): the failure issue 27 found was a timed-out test whose teardown then hung
for 12 minutes. Each inner session uses second-long deadlines, and the outer `runpytest_subprocess` a timeout of
its own, so that a broken plugin fails these tests instead of hanging them.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INNER_INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
timeout = 2
teardown_timeout = 2
timeout_grace = 2
exit_timeout = 3
"""
OUTER_S = 90  # every scenario ends within about 10 s; this only bounds a broken plugin


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeini(INNER_INI)
    pytester.makeconftest('pytest_plugins = ["tests.support.deadlines"]\n')
    return pytester


def run(inner: pytest.Pytester, source: str) -> tuple[pytest.RunResult, float]:
    inner.makepyfile(test_inner=source)
    started = time.monotonic()
    result = inner.runpytest_subprocess("-p", "no:cacheprovider", "-q", timeout=OUTER_S)
    return result, time.monotonic() - started


def test_an_async_teardown_that_waits_forever_is_cancelled_reported_and_the_session_goes_on(
    inner: pytest.Pytester,
) -> None:
    result, took = run(
        inner,
        """
import asyncio
import pytest_asyncio

@pytest_asyncio.fixture
async def stuck():
    yield
    await asyncio.Event().wait()  # a teardown waiting for something that never comes

async def test_uses_it(stuck):
    pass

def test_after_it():
    pass
""",
    )
    result.assert_outcomes(passed=2, errors=1)
    assert "test_uses_it: teardown over 2.0 s: cancelling its tasks" in result.stderr.str()
    assert "--- task" in result.stderr.str()  # the pending task's stack, named
    assert took < OUTER_S / 3


def test_a_timed_out_test_that_swallows_the_cancellation_and_then_passes_is_still_failed(
    inner: pytest.Pytester,
) -> None:
    result, _ = run(
        inner,
        """
import asyncio
import contextlib

async def test_waits_then_passes():
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_waits_then_passes: Timeout (>2.0 s) (its cancellation was swallowed*"])


def test_a_timed_out_test_whose_task_refuses_cancellation_is_stopped_and_its_teardown_too(
    inner: pytest.Pytester,
) -> None:
    # The hang: a test times out while a task of its own swallows every cancellation.
    result, took = run(
        inner,
        """
import asyncio

async def stubborn():
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass  # never ends when cancelled

async def test_hangs():
    await asyncio.gather(stubborn())

def test_after_it():
    pass
""",
    )
    result.assert_outcomes(passed=1, failed=1, errors=1)  # the timeout, then its teardown (pytest-asyncio's close)
    err = result.stderr.str()
    assert "test_hangs: Timeout (>2.0 s): cancelling its tasks" in err
    assert "test_hangs: Timeout (>2.0 s): still running 2.0 s later; stopping it" in err
    assert "test_hangs: teardown over 2.0 s" in err
    assert took < OUTER_S / 3


def test_a_teardown_that_swallows_every_interruption_ends_the_process_with_every_stack(
    inner: pytest.Pytester,
) -> None:
    result, took = run(
        inner,
        """
import time
import pytest

@pytest.fixture
def deaf():
    yield
    while True:
        try:
            time.sleep(3600)
        except BaseException:
            pass  # swallows pytest's Failed as well

def test_uses_it(deaf):
    pass

def test_never_reached():
    pass
""",
    )
    assert result.ret == 1
    err = result.stderr.str()
    assert "test_uses_it: teardown over 2.0 s: interrupting it" in err
    assert "still running 2.0 s later; stopping it" in err
    assert "most recent call first" in err and "in deaf" in err  # faulthandler's dump, naming the frame
    assert "test_never_reached" not in result.stdout.str()
    assert took < OUTER_S / 3


def test_a_thread_left_running_cannot_hold_the_interpreter_exit(inner: pytest.Pytester) -> None:
    result, took = run(
        inner,
        """
import threading

def test_leaves_a_thread():
    threading.Thread(target=threading.Event().wait, name="forgotten").start()  # not a daemon: joined at exit
""",
    )
    assert result.ret == 1  # passed, but the exit had to be forced: loud, with the stacks
    assert "1 passed" in result.stdout.str()
    assert "most recent call first" in result.stderr.str()
    assert took < OUTER_S / 3
