"""Time `javakb` start-up: CPU seconds until a command has run, this tree against a baseline commit.

Run from the repository root:

    .venv/bin/python -m bench.cli_startup                       # against HEAD~ (or --baseline REV)
    .venv/bin/python -m bench.cli_startup --baseline 4c503cf --repeat 7

The baseline is `git archive REV` unpacked into a temporary folder and run with the same interpreter
and packages (only `PYTHONPATH` differs), alternating with this tree, each command `--repeat` times;
the best (minimum) CPU time of the child (user + system, from `wait4`) is kept, so load from other
processes on the machine counts as little as it can. Commands: `import entry.cli`; `javakb token`
(needs neither the store nor the web stack); `javakb search` on an empty embedded store in a
temporary folder (opens Qdrant's local mode). None of them imports the pipeline's outline reader, so
the baseline's tree needs no built C extension (`pipeline._native`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS: dict[str, str] = {
    "import entry.cli": "import entry.cli",
    "javakb token": "from entry.cli import main; main(['token', '--name', 'bench', '--repos', 'acme/'])",
    "javakb search": "from entry.cli import main; main(['search', 'owner reminder'])",
}


def cpu_seconds(code: str, tree: Path, store: Path) -> float:
    """CPU time (user + system) of one interpreter running `code` with `tree` first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "JAVAKB_QDRANT__PATH": str(store),
    }
    with subprocess.Popen(
        [sys.executable, "-c", code], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{code!r} failed in {tree} (exit {child.returncode})")
    return usage.ru_utime + usage.ru_stime


def unpack(rev: str, into: Path) -> Path:
    """The tree of commit `rev`, unpacked from `git archive`."""
    archive = into / "baseline.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD~", help="the commit to compare with (default HEAD~)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per command and tree; the best is kept")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"baseline": unpack(args.baseline, Path(tmp)), "this tree": ROOT}
        best: dict[tuple[str, str], float] = {}
        for _ in range(args.repeat):
            for command, code in COMMANDS.items():
                for name, tree in trees.items():
                    seconds = cpu_seconds(code, tree, Path(tmp) / f"store-{name.replace(' ', '-')}")
                    key = (command, name)
                    best[key] = min(best.get(key, seconds), seconds)
    print(f"CPU seconds, best of {args.repeat} (baseline {args.baseline}):")
    print(f"{'command':<16} {'baseline':>9} {'this tree':>10} {'ratio':>6}")
    for command in COMMANDS:
        old, new = best[(command, "baseline")], best[(command, "this tree")]
        print(f"{command:<16} {old:>9.2f} {new:>10.2f} {old / new:>5.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
