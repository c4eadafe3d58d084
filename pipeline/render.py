"""The text a chunk is embedded as, its content hash and its stable id."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from pipeline._values import value

# Fixed forever: changing it changes every point id in every collection.
ID_NAMESPACE = uuid.UUID("6f1d3c2a-8a4e-5b7f-9c0d-1e2f3a4b5c6d")
_NAMESPACE_BYTES = ID_NAMESPACE.bytes
_MAX_CALLS_IN_HEADER = 24


def chunk_id(repo_path: str, file_path: str, key: str, part_index: int) -> str:
    """Deterministic point id from where the symbol lives and its overload-proof key.

    Equal to `str(uuid.uuid5(ID_NAMESPACE, name))` (RFC 4122 §4.3), built without `uuid.UUID`,
    which is half of this function's cost at 50,000 chunks a second.
    """
    name = f"{repo_path}\n{file_path}\n{key}\n{part_index}"
    raw = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name.encode("utf-8")).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50  # version 5
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def content_hash(text: str) -> str:
    """sha256 of the embedding text: equal hashes mean an equal vector can be reused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    kind = header.kind if not header.stereotype else f"{header.kind} ({header.stereotype})"
    if header.part is not None:
        kind += f" (part {header.part[0] + 1} of {header.part[1]})"
    lines = [
        f"repository: {header.repo_path}",
        f"package: {header.package}" if header.package else "",
        f"symbol: {header.qualified_name}",
        f"kind: {kind}",
        f"signature: {header.signature}",
        f"annotations: {' '.join(header.annotations)}" if header.annotations else "",
        _http_line(header.http_method, header.http_path),
        _calls_line(header.calls),
        f"summary: {header.javadoc_summary}" if header.javadoc_summary else "",
    ]
    return "\n".join(line for line in lines if line) + "\n---\n" + code


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
