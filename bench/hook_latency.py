"""Time the agent hook (issue 16): `javakb hook claude-code` end to end, against `javakb search` in the same run.

Run from the repository root:

    .venv/bin/python -m bench.hook_latency                  # 40 prompts per command
    .venv/bin/python -m bench.hook_latency --repeat 100

A service like `javakb serve`'s (the embedded Qdrant Edge store in a temporary folder, the `shop`
fixture indexed, the local socket of `entry.local_api`) runs in this process; once warm (a few calls
each first), each prompt is sent, in turn, by three fresh processes, as an agent would start them:
`javakb hook claude-code` with the hook's JSON on stdin (the prompt's context: the search, the named
symbols, callers and callees, the framed text), `javakb search PROMPT` (the baseline: the same start-up
and one search through the same socket) and `javakb hook claude-code` against a socket nobody listens
on (the server down). Wall time of each process, from spawn to exit, as the agent waits for it;
p50/p95/max in milliseconds, and the CPU time of the process (user + system, from `wait4`), which
load from other processes on a shared machine inflates far less. `javakb-hook` is the hook
`install-agent-hooks` writes (the same code without the CLI's start-up); `javakb hook` is timed too.
Prompts alternate between tasks about the fixture and unrelated ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.core.settings import QdrantSettings, Settings
from app.sync.local_index import index_directory
from bench.common import interpolated, load_avg, log
from entry.deps import open_deps
from entry.local_api import serving, socket_path

ROOT = Path(__file__).resolve().parents[1]
SHOP_DIR = ROOT / "tests" / "fixtures" / "java" / "shop"
JAVAKB = str(Path(sys.executable).with_name("javakb"))
HOOK = str(Path(sys.executable).with_name("javakb-hook"))
PROMPTS = (
    "Make OwnerService.find throw OwnerNotFoundException instead of returning an empty Optional",
    "write a haiku about autumn",
    "the visit reminder job sends reminders twice; make sendVisitReminders idempotent",
    "fix the CSS of the login button",
    "add pagination to GET /api/owners/search",
    "how do I undo the last git commit",
)
WARM_UP = 3


@contextmanager
def service(store: Path) -> Iterator[Path]:
    """The embedded store with the fixture indexed, answering on its local socket until the block ends."""
    ready, stop = threading.Event(), threading.Event()
    settings = Settings(qdrant=QdrantSettings(path=str(store), engine="edge"))
    path = socket_path(settings.qdrant)
    assert path is not None

    async def run() -> None:
        async with open_deps(settings) as deps, serving(deps, path):
            await index_directory(deps, SHOP_DIR, "acme/shop")
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)

    thread = threading.Thread(target=lambda: asyncio.run(run()), daemon=True)
    thread.start()
    if not ready.wait(300):
        raise SystemExit("the service did not start")
    try:
        yield path
    finally:
        stop.set()
        thread.join(30)


def timed(argv: Sequence[str], stdin: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds from spawning `argv` to its exit, and the CPU seconds it used (it must exit 0)."""
    started = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True
    ) as child:
        assert child.stdin is not None
        child.stdin.write(stdin)
        child.stdin.close()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"{argv[1:3]} failed (exit {child.returncode})")
    return wall, usage.ru_utime + usage.ru_stime


def commands(prompt: str, socket: Path, down: Path) -> dict[str, tuple[list[str], str]]:
    """Each timed command with its stdin."""
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt, "session_id": "bench"})
    return {
        "javakb-hook claude-code": ([HOOK, "claude-code", "--socket", str(socket)], payload),
        "javakb hook claude-code": ([JAVAKB, "hook", "claude-code", "--socket", str(socket)], payload),
        "javakb search (baseline)": ([JAVAKB, "search", prompt, "--limit", "10"], ""),
        "javakb-hook, server down": ([HOOK, "claude-code", "--socket", str(down)], payload),
    }


def measure(repeat: int, socket: Path, store: Path) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU seconds of every command, `repeat` prompts each, the commands taking turns."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAVAKB_")}
    env["JAVAKB_QDRANT__PATH"] = str(store)
    down = store.parent / "nobody.sock"
    for prompt in PROMPTS[:WARM_UP]:
        for argv, stdin in commands(prompt, socket, down).values():
            timed(argv, stdin, env)
    seconds: dict[str, list[tuple[float, float]]] = {}
    for i in range(repeat):
        for name, (argv, stdin) in commands(PROMPTS[i % len(PROMPTS)], socket, down).items():
            seconds.setdefault(name, []).append(timed(argv, stdin, env))
    return seconds


def report(seconds: dict[str, list[tuple[float, float]]]) -> str:
    """Wall p50, p95 and max, and the process's CPU p50 and p95, per command, in milliseconds."""
    head = f"{'command':<26}{'n':>5}{'wall p50':>10}{'wall p95':>10}{'wall max':>10}{'cpu p50':>9}{'cpu p95':>9}"
    lines = [head]
    for name, values in seconds.items():
        wall = sorted(w * 1000 for w, _ in values)
        cpu = sorted(c * 1000 for _, c in values)
        lines.append(
            f"{name:<26}{len(wall):>5}{interpolated(wall, 50):>10.0f}{interpolated(wall, 95):>10.0f}"
            f"{wall[-1]:>10.0f}{interpolated(cpu, 50):>9.0f}{interpolated(cpu, 95):>9.0f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40, help="prompts per command (default 40)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "kb"
        log("indexing the fixture into the embedded store ...")
        with service(store) as socket:
            log(f"timing {args.repeat} prompts per command (load {load_avg()}) ...")
            seconds = measure(args.repeat, socket, store)
    print(f"wall milliseconds per process, {args.repeat} prompts each (load after: {load_avg()}):")
    print(report(seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
