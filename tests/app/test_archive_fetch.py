"""A never-indexed project is fetched as one repository archive, filtered to the scope while it streams;
GitLab's rate limits pause every call (issue 14)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import subprocess
import tarfile

import pytest

from app.gitlab.archive import ArchiveRefusedError, read_archive
from app.gitlab.client import MAX_PAUSE_S, RateGate, pause_s
from testkit.sync_env import SyncEnv
from tests.support.sources import plain_java as service

SRC = "src/main/java/com/acme/"


async def test_a_first_sync_is_one_archive_request_and_equals_the_tree(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    files: dict[str, str | bytes | None] = {SRC + f"S{i}.java": service(f"S{i}") for i in range(12)}
    await env.push(project, files | {"README.md": "hi", "web/app.js": "x"})
    await env.work()
    await env.audit(project)
    assert env.gitlab.call_count("/archive") == 1
    assert env.gitlab.call_count("/blobs/") == env.gitlab.call_count("/tree") == 0
    manifest = await env.deps.db.manifest(project.id)
    tree = project.repo.ls_tree(project.head(), recursive=True)
    assert manifest == {e.path: e.sha for e in tree if e.path.startswith(SRC)}  # blob ids as git names them
    await env.push(project, {SRC + "S0.java": service("Changed")})
    await env.work()
    await env.audit(project)
    assert [r["mode"] for r in await env.runs(project.id)] == ["archive", "compare"]


async def test_a_throttled_archive_falls_back_to_the_tree_walk(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    env.gitlab.archive_limit_per_min = 0  # every archive request is over the limit: 429
    await env.push(project, {SRC + "A.java": service("A")})
    await env.work()
    await env.audit(project)
    assert [r["mode"] for r in await env.runs(project.id)] == ["tree"]
    assert env.gitlab.call_count("/archive") == 1  # no retry, no wait: the tree walk took over at once


async def test_export_attributes_make_the_sync_walk_the_tree(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    attributes = f"{SRC}Hidden.java export-ignore\n"
    await env.push(project, {".gitattributes": attributes, SRC + "Hidden.java": service("Hidden")})
    await env.work()
    await env.audit(project)  # Hidden.java is indexed although `git archive` leaves it out
    assert [r["mode"] for r in await env.runs(project.id)] == ["tree"]


def tar_gz(files: dict[str, bytes], prefix: str = "shop-main-abc/") -> io.BytesIO:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(prefix + path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo(prefix + "src/Link.java")
        link.type, link.linkname = tarfile.SYMTYPE, "A.java"
        tar.addfile(link)
    raw.seek(0)
    return raw


def git_blob_id(data: bytes) -> str:
    return (
        subprocess.run(["git", "hash-object", "--stdin"], input=data, capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )


def test_read_archive_keeps_the_scope_hashes_like_git_and_caps_big_files() -> None:
    files = {"src/A.java": b"class A {}", "src/Big.java": b"x" * 100, "README.md": b"hi"}
    found = read_archive(tar_gz(files), lambda p: p.endswith(".java"), 50, "sha1")
    assert set(found) == {"src/A.java", "src/Big.java"}  # README out of scope, the symlink is no file
    assert found["src/A.java"] == (b"class A {}", git_blob_id(b"class A {}"), 10)
    assert found["src/Big.java"] == (None, git_blob_id(b"x" * 100), 100)  # hashed, never held
    assert hashlib.sha1(b"blob 10\0class A {}").hexdigest() == found["src/A.java"][1]


def test_read_archive_refuses_export_attributes() -> None:
    stream = tar_gz({"src/A.java": b"class A {}", "src/.gitattributes": b"*.java export-subst\n"})
    with pytest.raises(ArchiveRefusedError, match="export attributes"):
        read_archive(stream, lambda p: p.endswith(".java"), 1000, "sha1")


@pytest.mark.parametrize(
    ("status", "headers", "now", "expected"),
    [
        (429, {"Retry-After": "7"}, 0.0, 7.0),
        (429, {"Retry-After": "soon"}, 0.0, 0.0),
        (200, {"RateLimit-Remaining": "0", "RateLimit-Reset": "1005"}, 1000.0, 5.0),
        (200, {"RateLimit-Remaining": "3", "RateLimit-Reset": "1005"}, 1000.0, 0.0),
        (200, {"RateLimit-Remaining": "0", "RateLimit-Reset": "999"}, 1000.0, 0.0),
        (200, {"RateLimit-Remaining": "0", "RateLimit-Reset": "999999"}, 1000.0, MAX_PAUSE_S),
        (200, {"Retry-After": "9"}, 0.0, 0.0),  # only a 429's Retry-After is a wait for everyone
    ],
)
def test_pause_reads_gitlabs_rate_limit_headers(
    status: int, headers: dict[str, str], now: float, expected: float
) -> None:
    assert pause_s(status, headers, now) == expected


async def test_the_gate_holds_every_call_until_the_reset() -> None:
    now = [1000.0]
    gate = RateGate(clock=lambda: now[0])
    await gate.wait()
    assert gate.waits == 0
    gate.observe(200, {"RateLimit-Remaining": "0", "RateLimit-Reset": "1000"})  # resets now: no wait
    await gate.wait()
    assert gate.waits == 0
    gate.observe(429, {"Retry-After": "1"})
    now[0] = 1000.99  # the pause ends 10 ms from now
    await asyncio.wait_for(gate.wait(), timeout=5)
    assert gate.waits == 1
