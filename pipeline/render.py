"""The text a chunk is embedded as, its content hash and its stable id."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence

from pipeline._values import value

# Fixed forever: changing it changes every point id in every collection.
ID_NAMESPACE = uuid.UUID("6f1d3c2a-8a4e-5b7f-9c0d-1e2f3a4b5c6d")
_NAMESPACE_BYTES = ID_NAMESPACE.bytes
_REPO_LABEL = "repository: "
_MAX_CALLS_IN_HEADER = 24


def chunk_id(repo: str, file_path: str, key: str, part_index: int) -> str:
    """Deterministic point id from where the symbol lives (see `repo_key`) and its overload-proof key.

    Equal to `str(uuid.uuid5(ID_NAMESPACE, name))` (RFC 4122 §4.3), built without `uuid.UUID`,
    which is half of this function's cost at 50,000 chunks a second.
    """
    return chunk_id_in(chunk_id_prefix(repo, file_path), key, part_index)


def chunk_id_prefix(repo: str, file_path: str) -> bytes:
    """What the ids of one file's chunks start from: computed once per file (see `chunk_id_in`)."""
    return _NAMESPACE_BYTES + f"{repo}\n{file_path}\n".encode()


def chunk_id_in(prefix: bytes, key: str, part_index: int) -> str:
    """`chunk_id` of a chunk of the file whose `chunk_id_prefix` is `prefix`."""
    raw = bytearray(hashlib.sha1(prefix + f"{key}\n{part_index}".encode()).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50  # version 5
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def content_hash(text: str) -> str:
    """sha256 of the embedding text without its `repository:` line: equal hashes mean a vector can be reused.

    The repository line is left out so that a project rename or transfer, which rewrites only the
    payload, leaves every hash (and so every stored vector) valid.
    """
    data = text.encode()
    if text.startswith(_REPO_LABEL):  # hash past the first line's newline, without copying the rest
        return hashlib.sha256(memoryview(data)[data.index(b"\n") + 1 :]).hexdigest()
    return hashlib.sha256(data).hexdigest()


def repo_key(repo_path: str, gitlab_project_id: int | None) -> str:
    """The repository part of a chunk id: the GitLab project id when known (a path changes on rename)."""
    return f"gitlab:{gitlab_project_id}" if gitlab_project_id is not None else repo_path


@value
class Header:
    """What the header of an embedding text says about a chunk."""

    repo_path: str
    package: str
    qualified_name: str
    kind: str
    stereotype: str | None
    signature: str
    annotations: Sequence[str]
    http_method: Sequence[str]
    http_path: Sequence[str]
    calls: Sequence[str]
    javadoc_summary: str | None
    part: tuple[int, int] | None = None


def embedding_text(header: Header, code: str) -> str:
    """A short structured header, a `---` line, then the code.

    The header carries the words a natural-language question uses (roles, routes, summary) that
    the code's identifiers may not contain. It holds no line numbers or commit, so a chunk whose code
    did not change keeps its text, hash and vector when other code moves around it.
    """
    return compose_text(
        header.repo_path,
        header.package,
        header.qualified_name,
        header.kind,
        header.stereotype,
        header.signature,
        header.annotations,
        header.http_method,
        header.http_path,
        header.calls,
        header.javadoc_summary,
        header.part,
        code,
    )


def compose_text(
    repo_path: str,
    package: str,
    qualified_name: str,
    kind: str,
    stereotype: str | None,
    signature: str,
    annotations: Sequence[str],
    http_method: Sequence[str],
    http_path: Sequence[str],
    calls: Sequence[str],
    javadoc_summary: str | None,
    part: tuple[int, int] | None,
    code: str,
) -> str:
    """`embedding_text` from the header's fields, for the pipeline's hot path (no `Header` per chunk)."""
    if stereotype:
        kind = f"{kind} ({stereotype})"
    if part is not None:
        kind += f" (part {part[0] + 1} of {part[1]})"
    # Appending only the lines that are present, then one join, is the cheapest form measured.
    lines = [f"{_REPO_LABEL}{repo_path}"]
    if package:
        lines.append(f"package: {package}")
    lines.append(f"symbol: {qualified_name}")
    lines.append(f"kind: {kind}")
    lines.append(f"signature: {signature}")
    if annotations:
        lines.append(f"annotations: {' '.join(annotations)}")
    if http_path:
        lines.append(_http_line(http_method, http_path))
    if calls:
        lines.append(_calls_line(calls))
    if javadoc_summary:
        lines.append(f"summary: {javadoc_summary}")
    lines.append("---")
    lines.append(code)
    return "\n".join(lines)


RenderArgs = tuple[
    str, str, str, str, str | None, str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
    str | None, str, int, int, bytes, str,
]  # fmt: skip
"""The arguments of `render_chunk`, in order."""


ChunkRenderer = Callable[[*RenderArgs], tuple[str, str, str]]
"""`render_chunk`, or the C extension's twin of it."""


def render_chunk(
    repo_path: str,
    package: str,
    qualified_name: str,
    kind: str,
    stereotype: str | None,
    signature: str,
    annotations: tuple[str, ...],
    http_method: tuple[str, ...],
    http_path: tuple[str, ...],
    calls: tuple[str, ...],
    javadoc_summary: str | None,
    code: str,
    part_index: int,
    part_count: int,
    id_prefix: bytes,
    key: str,
    /,
) -> tuple[str, str, str]:
    """A chunk's embedding text, its `content_hash` and its `chunk_id_in(id_prefix, key, part_index)`.

    `pipeline._native.render_chunk` does the same in one C call when it is built (pipeline.native).
    """
    part = (part_index, part_count) if part_count > 1 else None
    text = compose_text(
        repo_path, package, qualified_name, kind, stereotype, signature, annotations, http_method, http_path,
        calls, javadoc_summary, part, code,
    )  # fmt: skip
    return text, content_hash(text), chunk_id_in(id_prefix, key, part_index)


def _http_line(methods: Sequence[str], paths: Sequence[str]) -> str:
    if not paths:
        return ""
    return f"http: {'|'.join(methods)} {', '.join(paths)}"


def _calls_line(calls: Sequence[str]) -> str:
    if not calls:
        return ""
    shown = ", ".join(calls[:_MAX_CALLS_IN_HEADER])
    more = len(calls) - _MAX_CALLS_IN_HEADER
    return f"calls: {shown}" + (f" (+{more} more)" if more > 0 else "")
