"""`javakb`: the command line. Each subcommand builds Settings once and passes it down.

Each command imports what it needs when it runs (the imports inside the `run_*` functions), so
`javakb search` does not pay for the web stack and `javakb token` for neither it nor Qdrant. While
`javakb serve` runs, `search`, `context` and `index` ask it through its socket
(`app.agents.local_socket.ask`, the standard library only) and import the store, the search and the
pipeline only when no service answers (tests/app/test_cli_socket_imports.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ValidationError

from app.core.access_settings import ALL_REPOS
from app.core.env_names import SCOPE_SETTING, invalid_settings
from app.core.errors import ServiceError
from app.core.settings import Settings
from entry.cli_admin import (
    run_admin_reindex,
    run_admin_status,
    run_doctor,
    run_install_hook,
    run_migrate,
    run_rebuild,
    run_token,
)
from entry.cli_services import run_serve, run_web, run_worker
from pipeline.model import LANGUAGES

if TYPE_CHECKING:
    from app.store.engines import Store
    from app.sync.local_index import LocalRun, Progress

Command = Callable[[argparse.Namespace, Settings], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `javakb` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    command: Command = args.command
    try:
        settings = Settings()
    except ValidationError as exc:  # a secret's value is hidden (app.core.secret_errors)
        _debug(args)
        print(f"javakb {argv_command(args)}: invalid configuration: {invalid_settings(exc.errors())}", file=sys.stderr)
        return 2
    try:
        return command(args, settings)
    except ServiceError as exc:
        # Typed errors carry a message meant for the operator; a traceback would bury it (`--debug` shows it).
        _debug(args)
        print(f"javakb {argv_command(args)}: {exc}", file=sys.stderr)
        return 1


def _debug(args: argparse.Namespace) -> None:
    """With `--debug`, the traceback of the error being handled, before its one-line message."""
    if args.debug:
        traceback.print_exc(file=sys.stderr)


def argv_command(args: argparse.Namespace) -> str:
    """The subcommand's name, for error messages."""
    command: Command = args.command
    return command.__name__.removeprefix("run_")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="javakb", description="Index Java code for AI coding agents.")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error with its message")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    chunks = sub.add_parser("chunks", help="print the chunks a file or directory would be indexed as (JSON lines)")
    chunks.add_argument("path", type=Path, help="a Java or Kotlin file, or a directory walked with the scope rules")
    chunks.add_argument("--repo", help="repository path recorded in each chunk (default: the directory name)")
    chunks.add_argument("--jobs", type=int, default=1, help="parse with this many processes (default 1)")
    chunks.set_defaults(command=run_chunks)

    index = sub.add_parser("index", help="index a local checkout into the vector store (incremental)")
    index.add_argument("path", type=Path, help="the checkout's root directory")
    index.add_argument("--repo", help="repository path to record (default: the directory name)")
    index.add_argument("--rebuild", action="store_true", help="build a new collection and switch the alias to it")
    index.add_argument(
        "--drop-other-repos", action="store_true", help="with --rebuild: allow other repositories to be left out"
    )
    index.add_argument("--jobs", type=int, default=1, help="parse with this many processes (default 1)")
    index.add_argument(
        "--no-optimize", dest="optimize", action="store_false", help="leave the dense vectors without their index"
    )
    index.set_defaults(command=run_index)
    optimize = sub.add_parser("optimize", help="build the embedded store's vector index (HNSW) while serve is stopped")
    optimize.set_defaults(command=run_optimize)

    search = sub.add_parser("search", help="hybrid search over the index, with citations")
    search.add_argument("query")
    search.add_argument("--repo", help="repository path, or a group prefix ending in /")
    search.add_argument("--path", help="folder or file path prefix")
    search.add_argument("--type", dest="symbol_type", help="method, constructor, method_part, class, interface...")
    search.add_argument("--stereotype", help="service, repository, rest_controller, ...")
    search.add_argument("--annotation", help="annotation simple name, e.g. Transactional")
    search.add_argument("--http-method", help="GET, POST, ...")
    search.add_argument("--language", choices=LANGUAGES, help="java or kotlin")
    search.add_argument(
        "--scope",
        choices=("code", "tests", "libraries", "all"),
        default="code",
        help="the organization's code (default), its tests (with JAVAKB_CHUNKING__INDEX_TESTS), libraries, or all",
    )
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--json", action="store_true", help="one JSON object per result")
    search.set_defaults(command=run_search)

    token = sub.add_parser("token", help="make a random bearer token: its settings entry on stdout, itself on stderr")
    token.add_argument("--name", required=True, help="who will hold it (shown in logs)")
    token.add_argument(
        "--repos", nargs="+", help=f"repository paths or group prefixes ending in '/'; {ALL_REPOS!r}: every one"
    )
    token.add_argument("--admin", action="store_true", help="an admin token (JAVAKB_ADMIN_TOKENS) instead")
    token.add_argument(
        "--project", type=int, metavar="ID", help="an index-job token of one project (JAVAKB_INDEX_JOB_TOKENS) instead"
    )
    token.set_defaults(command=run_token)

    sub.add_parser("migrate", help="apply the PostgreSQL migrations").set_defaults(command=run_migrate)
    doctor = sub.add_parser("doctor", help="check every dependency and say what is wrong and how to fix it")
    chosen = doctor.add_mutually_exclusive_group()
    chosen.add_argument(
        "--local", dest="local", action="store_true", default=None, help="what `serve --watch` needs (no GitLab)"
    )
    chosen.add_argument(
        "--service", dest="local", action="store_false", help="a GitLab deployment (the default with a GitLab URL)"
    )
    doctor.set_defaults(command=run_doctor)
    admin = sub.add_parser("admin", help="administer the service").add_subparsers(required=True, metavar="ACTION")
    hook = admin.add_parser("install-hook", help="register (or repair) the GitLab system hook, idempotently")
    hook.add_argument("--url", help="this service's public base URL (default: JAVAKB_OAUTH__PUBLIC_URL)")
    hook.set_defaults(command=run_install_hook)
    reindex = admin.add_parser("reindex", help="backfill a project, a group or every project through the admin API")
    target = reindex.add_mutually_exclusive_group(required=True)
    target.add_argument("--project", help="a project id or full path (acme/shop)")
    target.add_argument("--group", help="a group id or full path, with its subgroups")
    target.add_argument("--all", action="store_true", help="every project the GitLab token sees")
    reindex.add_argument("--full", action="store_true", help="walk whole trees instead of comparing")
    reindex.add_argument("--force", action="store_true", help="embed unchanged chunks again too")
    reindex.add_argument("--watch", action="store_true", help="follow the backfill's progress until it ends")
    reindex.set_defaults(command=run_admin_reindex)
    status = admin.add_parser("status", help="projects by state, or one backfill's progress (JAVAKB_ADMIN__URL)")
    status.add_argument("--backfill", type=int, metavar="ID", help="a backfill's progress instead")
    status.add_argument("--watch", action="store_true", help="keep refreshing (a backfill: until it ends)")
    status.set_defaults(command=run_admin_status)
    rebuild = admin.add_parser("rebuild", help="fill a new generation with the next embedding model, then switch")
    rebuild.add_argument("--watch", action="store_true", help="print its progress until it is done")
    rebuild.add_argument("--id", type=int, help="follow this rebuild instead of starting one")
    rebuild.set_defaults(command=run_rebuild)
    sub.add_parser("web", help="run the receiver, admin API (and MCP): needs a Qdrant server").set_defaults(
        command=run_web
    )
    sub.add_parser("worker", help="run the arq sync worker: needs a Qdrant server").set_defaults(command=run_worker)
    serve_cmd = sub.add_parser("serve", help="receiver and worker in one process (required for embedded Qdrant)")
    serve_cmd.add_argument(
        "--watch", nargs="+", type=Path, default=[], metavar="PATH", help="local checkouts to index and keep fresh"
    )
    serve_cmd.set_defaults(command=run_serve)
    _agent_parsers(sub)
    return parser


def _agent_parsers(sub: Any) -> None:
    """`javakb context`, `hook` and `install-agent-hooks` (issue 16: context that arrives without asking)."""
    context = sub.add_parser("context", help="the few indexed chunks most useful for a task, framed for an agent")
    context.add_argument("task", help="the task, as you would tell an agent")
    context.add_argument("--repo", help="repository path, or a group prefix ending in /")
    context.add_argument("--max-chars", type=int, default=None, help="budget in characters (default 6000)")
    context.add_argument("--json", action="store_true", help="the chosen chunks as JSON instead of the text")
    context.set_defaults(command=run_context)
    hook = sub.add_parser("hook", help="an agent's prompt hook: reads its JSON on stdin, prints the context")
    hook.add_argument("client", choices=["claude-code", "cursor"])
    hook.add_argument("--socket", type=Path, help="javakb serve's socket (default: from JAVAKB_QDRANT__PATH)")
    hook.add_argument("--timeout", type=float, default=1.0, help="seconds to wait for the service (default 1)")
    hook.add_argument("--max-chars", type=int, default=6000, help="budget of the context in characters")
    hook.add_argument("--url", help="a deployment's base URL: ask its REST API instead of the local socket")
    hook.add_argument("--token-file", type=Path, help="with --url: a file holding the bearer token")
    hook.set_defaults(command=run_hook)
    install = sub.add_parser("install-agent-hooks", help="add (or --remove) the prompt hooks of Claude Code, Cursor")
    install.add_argument("--claude-code", action="store_true", help="Claude Code only")
    install.add_argument("--cursor", action="store_true", help="Cursor only")
    install.add_argument(
        "--project", nargs="?", const=Path("."), type=Path, metavar="DIR", help="a project's config, not the user's"
    )
    install.add_argument("--remove", action="store_true", help="remove what this command added")
    install.add_argument("--url", help="the hook asks this deployment's REST API instead of the local socket")
    install.add_argument("--token-file", type=Path, help="with --url: the file holding the hook's bearer token")
    install.set_defaults(command=run_install_agent_hooks)


def run_chunks(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Print every chunk as one JSON object per line, then every skipped file or span."""
    from app.sync.localfs import chunk_local_files, iter_sources
    from pipeline.model import Skipped, SourceContext
    from pipeline.records import chunk_record, skipped_record
    from pipeline.scope import Scope

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


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    """Index a local directory; print what was indexed (and embedded), reused, deleted and skipped."""
    from app.agents.local_socket import ask, socket_path

    path: Path = args.path
    if not path.is_dir():
        print(f"javakb index: {path}: not a directory", file=sys.stderr)
        return 2
    repo = args.repo or path.resolve().name
    progress = _progress_bar if sys.stderr.isatty() else None
    request = {
        "command": "index",
        "path": str(path.resolve()),
        "repo": repo,
        "rebuild": args.rebuild,
        "drop_others": args.drop_other_repos,
        "jobs": args.jobs,
    }
    remote = ask(socket_path(settings.qdrant), request, progress)  # a running `javakb serve` holds the store
    if remote is not None:
        counts, removed, left_out = remote["counts"], remote["removed_files"], remote.get("left_out")
    else:
        counts, removed, left_out = _index(settings, path, repo, args, progress)
    print(index_summary(repo, counts, removed, settings.embedding.model_name, left_out), file=sys.stderr)
    return 0


def index_summary(
    repo: str, counts: dict[str, Any], removed_files: int, model: str | None, left_out: int | None = None
) -> str:
    """What `javakb index` did (`counts`: a `RunCounts`' fields): chunks indexed, embedded only with a model.

    `left_out` (a `LocalRun`'s: set when no file was in scope) adds how many `.java` files the scope left out.
    """
    written = f"embedded with {model} and indexed" if model else "indexed (lexical only: embedding provider none)"
    scope = "" if left_out is None else f"; no file in scope, {left_out} .java files left out (see {SCOPE_SETTING})"
    return (
        f"javakb index: {repo}: {counts['files']} files, {counts['embedded']} chunks {written}, "
        f"{counts['reused']} reused, {counts['deleted']} deleted, {counts['skipped']} skipped, "
        f"{removed_files} vanished files removed{scope}"
    )


def _index(
    settings: Settings, path: Path, repo: str, args: argparse.Namespace, progress: Progress | None
) -> tuple[dict[str, Any], int, int | None]:
    """Index in this process (no service holds the store): the run's counts, removed files and left-out count."""
    import dataclasses

    run = asyncio.run(_index_here(settings, path, repo, args, progress))
    return dataclasses.asdict(run.counts), run.removed_files, run.left_out


async def _index_here(
    settings: Settings, path: Path, repo: str, args: argparse.Namespace, progress: Progress | None
) -> LocalRun:
    import dataclasses

    from app.sync.indexed_here import note_indexed
    from app.sync.local_index import index_directory
    from entry.deps import open_deps

    async with open_deps(settings) as deps:
        run = await index_directory(
            deps, path, repo, rebuild=args.rebuild, drop_others=args.drop_other_repos, jobs=args.jobs, progress=progress
        )
        # No PostgreSQL here: the next `javakb serve` records the run as a local project (`app.sync.indexed_here`).
        alone = args.rebuild and args.drop_other_repos
        note_indexed(settings.qdrant, repo, path, dataclasses.asdict(run.counts), alone=alone)
        if args.optimize and settings.embedding.enabled:
            await _optimize(deps.store, "javakb index")
        return run


async def _optimize(store: Store, command: str) -> bool:
    """Build the store's vector index where it lacks one, saying so first: it holds this process for minutes at 100k."""
    print(
        f"{command}: building the vector index where it is missing (HNSW; minutes at 100k chunks) ...", file=sys.stderr
    )
    started = time.perf_counter()
    built = await store.optimize()
    done = f"built in {time.perf_counter() - started:.1f} s" if built else "nothing to build"
    print(f"{command}: vector index: {done}", file=sys.stderr)
    return built


def run_optimize(args: argparse.Namespace, settings: Settings) -> int:
    """Build the embedded store's vector index (HNSW of the dense vectors); `serve` must not hold the store."""
    from entry.deps import open_deps

    async def optimize() -> None:
        async with open_deps(settings) as deps:
            await _optimize(deps.store, "javakb optimize")

    asyncio.run(optimize())
    return 0


def _progress_bar(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done >= total else ""
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files", end=end, file=sys.stderr, flush=True)


def run_search(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Print ranked results with citations (or JSON lines with `--json`)."""
    from app.agents.local_socket import ask, socket_path
    from app.search.query_limits import check_query
    from entry.filters import filter_fields

    out = out or sys.stdout
    check_query(args.query, settings.access.max_query_chars, settings.access.max_query_terms)  # before the socket
    request = {
        "command": "search", "query": args.query, "filters": filter_fields(args), "limit": args.limit,
        "scope": args.scope,
    }  # fmt: skip
    remote = ask(socket_path(settings.qdrant), request)  # a running `javakb serve` holds the store
    views: list[dict[str, Any]] = remote if remote is not None else asyncio.run(_search(settings, request))
    for rank, view in enumerate(views, 1):
        if args.json:
            record = {**view["citation"], "symbol_type": view["symbol_type"], "rank": rank}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            out.write(_render_hit(rank, view))
    if not views and not args.json:
        out.write("no results\n")
    return 0


async def _search(settings: Settings, request: dict[str, Any]) -> list[dict[str, Any]]:
    """The search in this process (no service holds the store), each hit as the socket would answer it."""
    from app.auth.access import LOCAL
    from app.search.scoping import Filters, SearchScope
    from entry.deps import open_deps
    from entry.local_api import hit_view

    async with open_deps(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        search = deps.search.within(SearchScope(request["scope"]))
        hits = await search.search(LOCAL, request["query"], Filters(**request["filters"]), request["limit"])
    return [hit_view(hit) for hit in hits]


def _render_hit(rank: int, view: dict[str, Any]) -> str:
    """A hit as `entry.local_api.hit_view` describes it, for a reader."""
    cited = view["citation"]
    stereotype = view["stereotype"]
    kind = f"{view['symbol_type']}, {stereotype}" if stereotype else view["symbol_type"]
    where = f"{cited['repo_path']}:{cited['file_path']}:{cited['line_start']}-{cited['line_end']}"
    sha = f" @ {cited['commit_sha'][:10]}" if cited["commit_sha"] else ""
    link = f"\n   {cited['permalink']}" if cited["permalink"] else ""
    return f"{rank:>2}. {cited['qualified_name']}  ({kind})\n   {cited['signature']}\n   {where}{sha}{link}\n"


def run_context(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Print the context `auto_context` picks for a task (nothing relevant: say so on stderr)."""
    from app.search.context_budget import MAX_MAX_CHARS, MIN_MAX_CHARS

    out = out or sys.stdout
    if args.max_chars is not None and not MIN_MAX_CHARS <= args.max_chars <= MAX_MAX_CHARS:
        print(f"javakb context: --max-chars must be within {MIN_MAX_CHARS}..{MAX_MAX_CHARS}", file=sys.stderr)
        return 2
    answer = _context(settings, args.task, args.repo, args.max_chars)
    if args.json:
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    elif answer["text"]:
        out.write(answer["text"] + "\n")
    else:
        print(
            f"javakb context: nothing indexed is relevant enough (best {answer['relevance']:.2f}, "
            f"threshold {answer['threshold']:.2f})",
            file=sys.stderr,
        )
    return 0


def _context(settings: Settings, task: str, repo: str | None, max_chars: int | None) -> dict[str, Any]:
    from app.agents.local_socket import ask, socket_path

    request = {"command": "context", "task": task, "repo": repo, "max_chars": max_chars}
    remote = ask(socket_path(settings.qdrant), request)  # a running `javakb serve` holds the store
    if remote is not None:
        answer: dict[str, Any] = remote
        return answer
    return asyncio.run(_context_here(settings, task, repo, max_chars))


async def _context_here(settings: Settings, task: str, repo: str | None, max_chars: int | None) -> dict[str, Any]:
    from app.auth.access import LOCAL
    from app.search.context import DEFAULT_MAX_CHARS, auto_context, context_answer
    from app.search.scoping import Where
    from entry.deps import open_deps

    async with open_deps(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        chars = DEFAULT_MAX_CHARS if max_chars is None else max_chars
        context = await auto_context(deps.search, LOCAL, task, where=Where(repo=repo), max_chars=chars)
    return context_answer(context)


def run_hook(args: argparse.Namespace, settings: Settings) -> int:
    """An agent's prompt hook (`app.agents.hook`): always exit 0, so the prompt is never held up."""
    from app.agents.hook import Client, remote_of, run_hook
    from app.agents.local_socket import socket_path

    socket = args.socket or socket_path(settings.qdrant)
    client, remote = Client(args.client), remote_of(args)
    return run_hook(
        client, sys.stdin, sys.stdout, socket=socket, timeout_s=args.timeout, max_chars=args.max_chars, remote=remote
    )


def run_install_agent_hooks(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    """Write (or remove) the agents' hook entries, merged into their existing config (`app.agents.install`)."""
    from app.agents.hook import Client, Remote
    from app.agents.install import hook_command, install
    from app.agents.local_socket import socket_path

    out = out or sys.stdout
    if bool(args.url) != (args.token_file is not None):
        print("javakb install-agent-hooks: --url and --token-file go together", file=sys.stderr)
        return 2
    remote = Remote(url=args.url, token_file=args.token_file.resolve()) if args.url else None
    chosen = [c for c, wanted in ((Client.CLAUDE_CODE, args.claude_code), (Client.CURSOR, args.cursor)) if wanted]
    scripts = [Path(sys.executable).with_name(name) for name in ("javakb-hook", "javakb")]
    javakb = str(next((s for s in scripts if s.exists()), "javakb"))
    socket = socket_path(settings.qdrant)
    changes = install(
        chosen or list(Client),
        home=Path.home(),
        project=args.project.resolve() if args.project is not None else None,
        command=lambda client: hook_command(javakb, client, socket, remote),
        remove=args.remove,
    )
    for change in changes:
        print(f"{change.path}: {change.action}", file=out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
