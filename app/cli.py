"""`javakb`: the command line. Each subcommand builds Settings once and passes it down."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from app.localfs import chunk_local_files, iter_sources
from app.settings import Settings
from pipeline.model import Skipped, SourceContext
from pipeline.records import chunk_record, skipped_record
from pipeline.scope import Scope

Command = Callable[[argparse.Namespace, Settings], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `javakb` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    command: Command = args.command
    return command(args, Settings())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="javakb", description="Index Java code for AI coding agents.")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    chunks = sub.add_parser("chunks", help="print the chunks a file or directory would be indexed as (JSON lines)")
    chunks.add_argument("path", type=Path, help="a Java file, or a directory walked with the scope rules")
    chunks.add_argument("--repo", help="repository path recorded in each chunk (default: the directory name)")
    chunks.add_argument("--jobs", type=int, default=1, help="parse with this many processes (default 1)")
    chunks.set_defaults(command=run_chunks)
    return parser


def run_chunks(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Print every chunk as one JSON object per line, then every skipped file or span."""
    out = out or sys.stdout
    path: Path = args.path
    if not path.exists():
        print(f"javakb chunks: {path}: no such file or directory", file=sys.stderr)
        return 2
    config = settings.chunking.to_config()
    resolved = path.resolve()
    repo = args.repo or (resolved.name if path.is_dir() else resolved.parent.name)
    # An explicitly named file is chunked whatever the scope says; a directory is walked with it.
    files = list(iter_sources(path, Scope.from_config(config))) if path.is_dir() else [(path.as_posix(), path)]
    skipped: list[Skipped] = []
    count = 0
    for result in chunk_local_files(files, SourceContext(repo_path=repo), config, args.jobs):
        for chunk in result.chunks:
            out.write(json.dumps(chunk_record(chunk), ensure_ascii=False) + "\n")
        count += len(result.chunks)
        skipped.extend(result.skipped)
    for item in skipped:
        out.write(json.dumps(skipped_record(item), ensure_ascii=False) + "\n")
    print(f"javakb chunks: {len(files)} files, {count} chunks, {len(skipped)} skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
