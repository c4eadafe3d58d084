"""A real git repository driven through the `git` CLI, for the fake GitLab.

Every read runs git again, so nothing goes stale after a commit, a force push or a branch move.
Global and system git config are switched off so the developer's own settings (`diff.noprefix`,
`commit.gpgsign`, hooks paths, ...) cannot change what the fake serves.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The id of git's empty tree; the diff base for a commit with no parent."""

_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
_LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%(trailers:unfold,only)%x1f%B"


class GitError(RuntimeError):
    """A git command failed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitInfo:
    sha: str
    parent_ids: tuple[str, ...]
    author_name: str
    author_email: str
    authored_date: str
    committer_name: str
    committer_email: str
    committed_date: str
    trailers: tuple[tuple[str, str], ...]
    message: str
    """The raw message as stored in the commit object (git keeps its trailing newline)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeEntry:
    mode: str
    type: str  # blob | tree | commit (a submodule)
    sha: str
    path: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    status: str  # A, C, D, M, R, T (the letter of `git diff --raw`)
    old_path: str
    new_path: str
    old_mode: str  # octal without leading zeros, "0" when the side is absent
    new_mode: str
    patch: str  # hunks only, from the first "@@"; "Binary files ... differ" for binaries; "" when none


class GitRepo:
    """One working-tree git repository under a test's tmp dir."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def init(cls, path: Path, initial_branch: str) -> GitRepo:
        path.mkdir(parents=True, exist_ok=False)
        repo = cls(path)
        repo.run("init", "-q", "-b", initial_branch)
        repo.run("config", "user.name", "Fake GitLab")
        repo.run("config", "user.email", "fake@gitlab.test")
        repo.run("config", "commit.gpgsign", "false")
        return repo

    # -- plumbing ---------------------------------------------------------------------------------

    def run(self, *args: str, stdin: bytes | None = None) -> bytes:
        out = self._run(args, stdin)
        if out.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
        return out.stdout

    def try_run(self, *args: str) -> bytes | None:
        out = self._run(args, None)
        return out.stdout if out.returncode == 0 else None

    def _run(self, args: tuple[str, ...], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
        env = {**os.environ, **_GIT_ENV}
        return subprocess.run(["git", *args], cwd=self.path, input=stdin, capture_output=True, env=env, check=False)

    # -- reads ------------------------------------------------------------------------------------

    def resolve_commit(self, ref: str) -> str | None:
        """The commit a branch, tag or sha names, or None (like Gitaly's FindCommit)."""
        out = self.try_run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        return out.decode().strip() if out else None

    def branch_head(self, branch: str) -> str | None:
        out = self.try_run("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
        return out.decode().strip() if out else None

    def is_empty(self) -> bool:
        return not self.run("for-each-ref", "--count=1", "refs/heads/").strip()

    def merge_base(self, a: str, b: str) -> str | None:
        out = self.try_run("merge-base", a, b)
        return out.decode().strip() if out else None

    def commits(self, *rev_args: str) -> list[CommitInfo]:
        """`git log` over the given revisions, oldest first."""
        raw = self.run("log", "-z", "--reverse", "--topo-order", f"--format={_LOG_FORMAT}", *rev_args, "--")
        return [_parse_commit(record) for record in raw.decode(errors="replace").split("\0") if record]

    def commit_info(self, sha: str) -> CommitInfo:
        return self.commits("-1", sha)[0]

    def ls_tree(self, treeish: str, *, recursive: bool) -> list[TreeEntry]:
        args = ["ls-tree", "-z", "--full-tree"] + (["-r", "-t"] if recursive else [])
        raw = self.run(*args, treeish)
        return [_parse_tree_line(line) for line in raw.decode(errors="surrogateescape").split("\0") if line]

    def object_type(self, sha: str) -> str | None:
        out = self.try_run("cat-file", "-t", sha)
        return out.decode().strip() if out else None

    def blob_at(self, commit: str, path: str) -> TreeEntry | None:
        """The blob at a path in a commit; None for a missing path, a directory or a submodule."""
        raw = self.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", commit, "--", path)
        entries = [_parse_tree_line(line) for line in raw.decode(errors="surrogateescape").split("\0") if line]
        return next((e for e in entries if e.path == path and e.type == "blob"), None)

    def read_blob(self, sha: str) -> bytes:
        return self.run("cat-file", "blob", sha)

    def last_commit_for_path(self, commit: str, path: str) -> str:
        return self.run("--literal-pathspecs", "log", "-1", "--format=%H", commit, "--", path).decode().strip()

    def diff(self, base: str, head: str) -> list[FileChange]:
        """The files changed from `base` to `head` with rename detection, in git's order."""
        common = ("diff", "-M", "--no-color", "--no-ext-diff", "--no-textconv")
        raw = self.run(*common, "--raw", "-z", "--no-abbrev", base, head)
        patches = _split_patches(self.run(*common, "--patch", base, head).decode(errors="replace"))
        changes = _parse_raw_diff(raw.decode(errors="surrogateescape"))
        if len(patches) != len(changes):
            raise GitError(f"diff {base} {head}: {len(changes)} changes but {len(patches)} patches")
        return [_with_patch(change, patch) for change, patch in zip(changes, patches, strict=True)]

    # -- writes -----------------------------------------------------------------------------------

    def commit_files(self, branch: str, files: Mapping[str, str | bytes | None], message: str, base: str) -> str:
        """Check out `branch` (created from `base` when missing), apply `files`, commit, return the sha."""
        self.checkout(branch, base)
        for rel, content in files.items():
            target = self.path / rel
            if content is None:
                self.run("rm", "-q", "--cached", "--ignore-unmatch", "--", rel)
                target.unlink(missing_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode() if isinstance(content, str) else content)
            self.run("add", "--", rel)
        return self.commit_index(message)

    def commit_index(self, message: str) -> str:
        self.run("commit", "-q", "--allow-empty", "--no-verify", "-F", "-", stdin=message.encode())
        return self.run("rev-parse", "HEAD").decode().strip()

    def checkout(self, branch: str, base: str) -> None:
        """Make `branch` the checked-out branch; a new branch starts at `base` (a branch or a sha)."""
        if self.is_empty():
            self.run("symbolic-ref", "HEAD", f"refs/heads/{branch}")
        elif self.branch_head(branch):
            self.run("checkout", "-q", "-f", branch)
        else:
            start = self.resolve_commit(base)
            if start is None:
                raise GitError(f"cannot create branch {branch!r}: unknown start {base!r}")
            self.run("checkout", "-q", "-f", "-b", branch, start)

    def current_branch(self) -> str:
        return self.run("symbolic-ref", "--short", "HEAD").decode().strip()


def _parse_commit(record: str) -> CommitInfo:
    sha, parents, an, ae, ad, cn, ce, cd, trailers, message = record.split("\x1f", 9)
    pairs = tuple(
        (key.strip(), value.strip())
        for line in trailers.splitlines()
        if ":" in line
        for key, value in [line.split(":", 1)]
    )
    return CommitInfo(
        sha=sha,
        parent_ids=tuple(parents.split()),
        author_name=an,
        author_email=ae,
        authored_date=ad,
        committer_name=cn,
        committer_email=ce,
        committed_date=cd,
        trailers=pairs,
        message=message,
    )


def _parse_tree_line(line: str) -> TreeEntry:
    meta, path = line.split("\t", 1)
    mode, kind, sha = meta.split(" ")
    return TreeEntry(mode=mode, type=kind, sha=sha, path=path)


def _parse_raw_diff(raw: str) -> list[FileChange]:
    fields = raw.split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        old_mode, new_mode, _old_sha, _new_sha, status = fields[i].lstrip(":").split(" ")
        two_paths = status[0] in "RC"
        old_path = fields[i + 1]
        new_path = fields[i + 2] if two_paths else old_path
        i += 3 if two_paths else 2
        changes.append(
            FileChange(
                status=status[0],
                old_path=old_path,
                new_path=new_path,
                old_mode=format(int(old_mode, 8), "o"),
                new_mode=format(int(new_mode, 8), "o"),
                patch="",
            )
        )
    return changes


def _split_patches(text: str) -> list[str]:
    """One chunk per file. A content line never starts with "diff --git" (it carries a +, - or space)."""
    chunks: list[list[str]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git "):
            chunks.append([])
        elif chunks:
            chunks[-1].append(line)
    return ["".join(chunk) for chunk in chunks]


def _with_patch(change: FileChange, chunk: str) -> FileChange:
    lines = chunk.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
    if start is not None:
        patch = "".join(lines[start:])
    else:
        patch = next((line for line in lines if line.startswith("Binary files ")), "")
    return FileChange(
        status=change.status,
        old_path=change.old_path,
        new_path=change.new_path,
        old_mode=change.old_mode,
        new_mode=change.new_mode,
        patch=patch,
    )
