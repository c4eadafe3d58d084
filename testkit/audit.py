"""The audit: the index of one project equals git at its default-branch head, file by file.

Chunks are recomputed locally from the git tree at the head (the same pipeline, the same scope) and
compared with every point stored under the project's id: no missing, stale or duplicate chunk; each
chunk's content, path and span right; each chunk's citation (`commit_sha`, from which the permalink
`<gitlab>/<repo>/-/blob/<commit_sha>/<file>#L<start>-<end>` is built) names a commit that still exists,
is on the default branch (the head or an ancestor of it), and holds the same lines of the same file
as the head. The sync state (indexed sha, path, manifest) must agree too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from qdrant_client import models as qm

from app.core.settings import Settings
from app.db import Database
from app.runtime import Deps
from pipeline.languages import chunk_file
from pipeline.model import Chunk, SourceContext
from pipeline.scope import Scope
from testkit.fake_gitlab import FakeProject
from testkit.git_repo import GitRepo, TreeEntry


def blobs(repo: GitRepo, sha: str) -> list[TreeEntry]:
    """Every blob of a commit."""
    return [e for e in repo.ls_tree(sha, recursive=True) if e.type == "blob"]


def head_chunks(project: FakeProject, sha: str, settings: Settings) -> dict[str, Chunk]:
    """Chunk id → chunk of every in-scope file at `sha`, chunked locally from git."""
    config = settings.chunking.to_config()
    scope = Scope.from_config(config)
    context = SourceContext(
        repo_path=project.path_with_namespace,
        gitlab_project_id=project.id,
        commit_sha=sha,
        branch=project.default_branch,
    )
    expected: dict[str, Chunk] = {}
    for entry in blobs(project.repo, sha):
        if scope.matches(entry.path):
            for chunk in chunk_file(project.repo.read_blob(entry.sha), entry.path, context, config).chunks:
                assert chunk.id not in expected, f"duplicate id {chunk.id}"
                expected[chunk.id] = chunk
    return expected


async def project_points(deps: Deps, project_id: int) -> dict[str, dict[str, Any]]:
    """Every point stored under a GitLab project id: id → payload."""
    where = qm.Filter(must=[qm.FieldCondition(key="gitlab_project_id", match=qm.MatchValue(value=project_id))])
    return {str(r.id): r.payload or {} async for r in deps.store.scroll(where, True)}


async def audit(
    deps: Deps, db: Database, settings: Settings, project: FakeProject, *, gone_paths: Iterable[str] = ()
) -> None:
    """Fail unless the project's index (`deps.store`, the state in `db`) equals git at its default-branch head.

    See the module docs. `gone_paths` are paths the project had before (a rename or transfer): no point
    may remain there.
    """
    head = project.head()
    row = await db.project(project.id)
    assert row is not None, f"project {project.id} has no sync state"
    assert row.indexed_sha == head, f"indexed {row.indexed_sha}, head {head}"
    assert row.repo_path == project.path_with_namespace, f"state says {row.repo_path}"
    expected = head_chunks(project, head, settings)
    actual = await project_points(deps, project.id)
    missing, stale = set(expected) - set(actual), set(actual) - set(expected)
    assert not missing and not stale, f"missing {sorted(missing)[:5]}, stale {sorted(stale)[:5]}"
    _assert_no_duplicates(actual)
    cited: dict[tuple[str, str], bool] = {}
    for point_id, chunk in expected.items():
        payload = actual[point_id]
        got = tuple(payload.get(k) for k in ("repo_path", "file_path", "content_hash", "line_start", "line_end"))
        want = (chunk.repo_path, chunk.file_path, chunk.content_hash, chunk.line_start, chunk.line_end)
        assert got == want, f"{point_id}: stored {got}, git has {want}"
        _assert_citation(project.repo, head, payload, cited)
    manifest = await db.manifest(project.id)
    scope = Scope.from_config(settings.chunking.to_config())
    assert set(manifest) == {e.path for e in blobs(project.repo, head) if scope.matches(e.path)}
    for path in gone_paths:
        where = qm.Filter(must=[qm.FieldCondition(key="repo_path", match=qm.MatchValue(value=path))])
        assert await deps.store.count(where) == 0, f"points left under the old path {path}"


def _assert_no_duplicates(points: dict[str, dict[str, Any]]) -> None:
    seen: dict[tuple[Any, ...], str] = {}
    for point_id, p in points.items():
        key = (p.get("file_path"), p.get("qualified_name"), tuple(p.get("parameter_types", [])), p.get("part_index"))
        assert key not in seen, f"duplicate chunk {key}: {seen[key]} and {point_id}"
        seen[key] = point_id


def _assert_citation(repo: GitRepo, head: str, payload: dict[str, Any], cited: dict[tuple[str, str], bool]) -> None:
    """The permalink's commit exists, is on the default branch, and shows the chunk's lines as at the head."""
    sha, path = str(payload.get("commit_sha")), str(payload["file_path"])
    start, end = int(payload["line_start"]), int(payload["line_end"])
    if (sha, path) not in cited:
        assert repo.resolve_commit(sha) == sha, f"{path} cites {sha}, which does not exist"
        on_branch = sha == head or repo.try_run("merge-base", "--is-ancestor", sha, head) is not None
        assert on_branch, f"{path} cites {sha}, which is not on the default branch"
        cited[(sha, path)] = True
    at_sha, at_head = repo.blob_at(sha, path), repo.blob_at(head, path)
    assert at_sha is not None, f"{path} does not exist at the cited commit {sha}"
    assert at_head is not None
    cited_lines = repo.read_blob(at_sha.sha).splitlines()[start - 1 : end]
    head_lines = repo.read_blob(at_head.sha).splitlines()[start - 1 : end]
    assert cited_lines == head_lines, f"{path}#L{start}-{end} differs at the cited commit {sha}"
