"""A repository archive (`GET /projects/:id/repository/archive.tar.gz?sha=`) read while it streams.

A first fetch of a project takes one request instead of a tree walk plus one request per file. The
tar is read member by member (`tarfile` stream mode: nothing is seeked, nothing spilled to disk), and
only the paths the indexing scope keeps are held in memory. GitLab's archive has no blob ids, so each
kept file's id is computed the way git names a blob (the hash of `blob <size>`, a NUL, then the bytes), so that the
manifest a later tree walk diffs against is the same as a tree walk would have written.

`git archive` honours `.gitattributes`: `export-ignore` leaves files out and `export-subst` rewrites
them. An archive whose attributes use either is refused (`ArchiveRefusedError`) and the sync walks the
tree instead: the index must equal the branch, not its export.
"""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Callable
from typing import IO

from app.core.errors import GitLabError

READ_CHUNK = 1 << 16
EXPORT_ATTRIBUTES = (b"export-ignore", b"export-subst")
SHA256_HEX = 64


class ArchiveRefusedError(GitLabError):
    """The archive does not equal the tree (export attributes): walk the tree instead."""


def blob_hash_name(commit_sha: str) -> str:
    """The object hash of the repository: SHA-256 repositories have 64-hex commit ids."""
    return "sha256" if len(commit_sha) == SHA256_HEX else "sha1"


def read_archive(
    stream: IO[bytes], keep: Callable[[str], bool], max_bytes: int, hash_name: str
) -> dict[str, tuple[bytes | None, str, int]]:
    """Path → (bytes or None above `max_bytes`, blob id, size) of every regular file `keep` accepts.

    The first path segment (GitLab's `<project>-<ref>-<sha>/` prefix) is dropped. Symbolic links
    and submodules are not files of the tree to index and are skipped.
    """
    files: dict[str, tuple[bytes | None, str, int]] = {}
    with tarfile.open(fileobj=stream, mode="r|gz") as tar:
        for member in tar:
            path = member.name.split("/", 1)[1] if "/" in member.name else ""
            if not member.isfile() or not path:
                continue
            wanted = keep(path)
            attributes = path.rsplit("/", 1)[-1] == ".gitattributes"
            if not (wanted or attributes):
                continue
            handle = tar.extractfile(member)
            assert handle is not None  # a regular file always has one
            data, blob_id = _read_member(handle, member.size, max_bytes, hash_name)
            if attributes and data is not None and any(a in data for a in EXPORT_ATTRIBUTES):
                raise ArchiveRefusedError(f"{path} uses export attributes: the archive differs from the tree")
            if wanted:
                files[path] = (data, blob_id, member.size)
    return files


def _read_member(handle: IO[bytes], size: int, max_bytes: int, hash_name: str) -> tuple[bytes | None, str]:
    digest = hashlib.new(hash_name, b"blob %d\0" % size)
    if size <= max_bytes:
        data = handle.read()
        digest.update(data)
        return data, digest.hexdigest()
    while chunk := handle.read(READ_CHUNK):  # over the cap: hashed, never held
        digest.update(chunk)
    return None, digest.hexdigest()
