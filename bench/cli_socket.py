"""Time `javakb search` through a running `javakb serve`'s socket, paired with `rg` and with a baseline commit.

Run from the repository root (PostgreSQL and Redis up, `rg` installed):

    .venv/bin/python -m bench.cli_socket                         # against main, 20 rounds
    .venv/bin/python -m bench.cli_socket --baseline 4a3e582 --repeat 40 --redis-db 4

The `shop` fixture (tests/fixtures/java/shop) is indexed once with the default settings (the embedded
model), into a store copied for the baseline; then two real `javakb serve` processes run, one from this
tree and one from the baseline's (`git archive REV`, run with the same interpreter and packages: only
`PYTHONPATH` differs), each holding its own copy of the store. Each round runs, in an order that rotates
every round, three fresh processes as a user at a terminal would start them: `javakb search QUERY` of
this tree against its serve, the same of the baseline against its serve, and `rg` with the query's words
on the same tree. Each process's wall time from spawn to exit and its CPU time (user + system, from
`wait4`, which load from other processes inflates far less) are recorded; the ratios are taken round by
round, so a change in the machine's speed between rounds cancels out.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from app.agents.local_socket import SOCKET_NAME, UnreachableError, request
from bench.cli_startup import unpack as unpacked
from bench.common import bench_database, free_port, load_avg, log, redis_url

ROOT = Path(__file__).resolve().parents[1]
SHOP_DIR = ROOT / "tests" / "fixtures" / "java" / "shop"
JAVAKB = str(Path(sys.executable).with_name("javakb"))
QUERY = "find the owner by id"
START_TIMEOUT_S = 180.0
Run = tuple[float, float]  # wall and CPU seconds of one process


def timed(argv: Sequence[str], env: dict[str, str]) -> Run:
    """Wall and CPU seconds of one process from spawn to exit; it must succeed and print something."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=err) as child:
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0 or not out.strip():
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed (exit {child.returncode}): {err.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def unpack(rev: str, into: Path) -> Path:
    """The tree of commit `rev` (`bench.cli_startup.unpack`), with this tree's built extension when it has none."""
    tree = unpacked(rev, into)
    for built in (ROOT / "pipeline").glob("_native*.so"):
        if not (tree / "pipeline" / built.name).exists():
            shutil.copy2(built, tree / "pipeline" / built.name)
    return tree


def environment(tree: Path, store: Path, dsn: str, redis: str, queue: str) -> dict[str, str]:
    """A local serve's settings, and the CLI's, for one tree."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("JAVAKB_")}
    return {
        **env,
        "PYTHONPATH": str(tree),
        "JAVAKB_QDRANT__PATH": str(store),
        "JAVAKB_POSTGRES__DSN": dsn,
        "JAVAKB_REDIS__URL": redis,
        "JAVAKB_REDIS__QUEUE": queue,
        "JAVAKB_PORT": str(free_port()),
        "JAVAKB_HOST": "127.0.0.1",
        "JAVAKB_LOG_LEVEL": "WARNING",
    }


@contextlib.contextmanager
def serving(env: dict[str, str], log_path: Path) -> Iterator[None]:
    """A `javakb serve` with `env`, once `/healthz` and its socket answer; terminated (then killed) on exit.

    `/healthz` first: a baseline's serve may accept on its socket before its store is open.
    """
    socket = Path(env["JAVAKB_QDRANT__PATH"]) / SOCKET_NAME
    healthz = f"http://{env['JAVAKB_HOST']}:{env['JAVAKB_PORT']}/healthz"
    with log_path.open("ab") as out:
        process = subprocess.Popen([JAVAKB, "serve"], env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise SystemExit(f"javakb serve exited with {process.returncode}: see {log_path}")
            with contextlib.suppress(OSError, UnreachableError):
                urllib.request.urlopen(healthz, timeout=5).close()  # raises unless 2xx
                request(socket, {"command": "context", "task": "warm up the service"}, 5.0)
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"javakb serve did not answer on {socket} within {START_TIMEOUT_S} s")
            time.sleep(0.1)  # polling another process: there is no event to wait on
        yield
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def summary(name: str, runs: list[Run]) -> str:
    walls, cpus = sorted(w for w, _ in runs), sorted(c for _, c in runs)
    return (
        f"| {name} | {statistics.median(walls) * 1000:.0f} | {walls[0] * 1000:.0f} | {walls[-1] * 1000:.0f} "
        f"| {statistics.median(cpus) * 1000:.0f} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="the commit to compare with (default main)")
    parser.add_argument("--repeat", type=int, default=20, help="rounds (each runs the three commands once)")
    parser.add_argument("--redis-db", type=int, default=14, help="a Redis database for the serves' queues")
    args = parser.parse_args(argv)
    if shutil.which("rg") is None:
        raise SystemExit("rg is not installed (Debian: apt-get install ripgrep)")
    rg = ["rg", "--line-number", "--ignore-case", "|".join(QUERY.split()), str(SHOP_DIR)]
    with tempfile.TemporaryDirectory() as tmp, bench_database() as dsn:
        folder = Path(tmp)
        trees = {"this tree": ROOT, f"baseline {args.baseline}": unpack(args.baseline, folder)}
        redis = redis_url(args.redis_db)
        envs = {
            name: environment(tree, folder / f"store-{i}", dsn, redis, f"javakb:bench:cli-socket-{i}")
            for i, (name, tree) in enumerate(trees.items())
        }
        first = next(iter(envs.values()))
        log("indexing the shop fixture ...")
        subprocess.run([JAVAKB, "index", str(SHOP_DIR), "--repo", "acme/shop"], env=first, check=True)
        for env in list(envs.values())[1:]:
            shutil.copytree(first["JAVAKB_QDRANT__PATH"], env["JAVAKB_QDRANT__PATH"])
        commands = {name: [JAVAKB, "search", QUERY] for name in trees} | {"rg": rg}
        runs: dict[str, list[Run]] = {name: [] for name in commands}
        with contextlib.ExitStack() as stack:
            for i, env in enumerate(envs.values()):
                stack.enter_context(serving(env, folder / f"serve-{i}.log"))
            env_of = {**envs, "rg": first}
            names = list(commands)
            for name in names:  # warm-up: the page cache, the services' first searches
                timed(commands[name], env_of[name])
            log(f"{args.repeat} rounds, load {load_avg()} ...")
            for round_ in range(args.repeat):
                for name in names[round_ % 3 :] + names[: round_ % 3]:
                    runs[name].append(timed(commands[name], env_of[name]))
    this, base = runs["this tree"], runs[f"baseline {args.baseline}"]
    print(f"`javakb search {QUERY!r}` through serve's socket, {args.repeat} rounds, load after {load_avg()}")
    print("| command | wall p50 ms | wall min | wall max | CPU p50 ms |\n| --- | ---: | ---: | ---: | ---: |")
    for name, measured in runs.items():
        print(summary(name, measured))
    for label, other in ((f"baseline {args.baseline}", base), ("rg", runs["rg"])):
        walls = statistics.median(a[0] / b[0] for a, b in zip(this, other, strict=True))
        cpus = statistics.median(a[1] / b[1] for a, b in zip(this, other, strict=True) if b[1] > 0)
        print(f"this tree / {label}, median of the rounds' ratios: wall {walls:.2f}, CPU {cpus:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
