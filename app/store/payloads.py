"""A stored point's payload, declared once: what the store writes and the typed view every reader reads.

The payload is a chunk's fields (`pipeline.model.Chunk`, its declaration is the source) without the
embedding text, plus the store's own keys, declared by `StoreKeys`. `stored_payload` writes that
shape; `StoredChunk.from_payload` reads it back into a `Chunk` and a `StoreKeys`, converting each
value as its field is declared (lists to tuples, `symbol_type` to `SymbolType`) and filling a field
an older point lacks with the declared default. Nothing outside this module reads a payload by key.

Reads of a few fields (the store's state scroll, the rename lookup) go through `read`, with the same
conversions and defaults. A payload read is a `.get` per field here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_origin, get_type_hints

from app.core.errors import StorageError
from app.store.filters import Condition, eq
from app.store.routes import candidate_keys, route_keys
from pipeline.model import Chunk, SymbolType
from pipeline.outbound import literal_tails, resolved_paths
from pipeline.records import chunk_record
from pipeline.spring import mapping_route

NOT_STORED = frozenset({"text"})
"""Chunk fields the payload leaves out: the embedding text is the header plus the code, both stored."""

STORED_TEXT = ""
"""A stored chunk's `text` (not stored: see `NOT_STORED`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreKeys:
    """The store's own payload keys, derived from the chunk when it is written.

    Defaults are what a point written before a key existed reads as: with no `payload_hash`, its
    payload is rewritten at the next write of its file.
    """

    payload_hash: str = ""  # digest of the stored chunk fields (see `payload_hash`)
    indexed_at: str | None = None  # ISO time of the write
    repo_prefixes: tuple[str, ...] = ()  # `a/`, `a/b/`, `a/b/repo`: group-prefix filters as exact matches
    path_prefixes: tuple[str, ...] = ()  # likewise for folders of `file_path`
    http_keys: tuple[str, ...] = ()  # route lookup keys (`app.store.routes.route_keys`)
    mapping_keys: tuple[str, ...] = ()  # the same keys of `routes_if_mapping`'s paths (confirmed at query time)
    outbound_keys: tuple[str, ...] = ()  # the same keys of the routes the chunk calls (`Chunk.outbound`)
    flags: tuple[str, ...] = ()  # the names of the chunk's `FLAGS` that are true
    source_hash: str = ""  # `source_stamp`: the file as chunked and its number of chunks; "": not known
    file_order: int | None = None  # `file_order`: the order of a lookup's pages; None: written before it existed


Convert = Callable[[Any], Any]
_REQUIRED = object()  # the default of a field declared without one
_ABSENT = object()


@dataclass(frozen=True, slots=True)
class _Field:
    """How one payload key reads: its conversion (None: as stored), and its declared default."""

    name: str
    convert: Convert | None
    default: Any


def _fields_of(cls: type[Any], skip: frozenset[str] = frozenset()) -> dict[str, _Field]:
    hints = get_type_hints(cls)
    specs: dict[str, _Field] = {}
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        kind = hints[f.name]
        convert: Convert | None = tuple if get_origin(kind) is tuple else SymbolType if kind is SymbolType else None
        default = _REQUIRED if f.default is dataclasses.MISSING else f.default  # every default is immutable
        specs[f.name] = _Field(f.name, convert, default)
    return specs


_CHUNK_FIELDS = _fields_of(Chunk, NOT_STORED)
_STORE_FIELDS = _fields_of(StoreKeys)
_CHUNK_SPECS = tuple(_CHUNK_FIELDS.values())
_STORE_SPECS = tuple(_STORE_FIELDS.values())
PAYLOAD_FIELDS: tuple[str, ...] = (*_CHUNK_FIELDS, *_STORE_FIELDS)
"""Every key of a stored payload, in the order written."""


FLAGS = ("generated", "library", "test")
"""Boolean chunk fields that filters match, also stored as the keyword list `flags`: Qdrant Edge's
Python binding reads a boolean match value as an integer, so a boolean field cannot be matched there."""


def flagged(name: str) -> Condition:
    """Points whose chunk field `name` (one of `FLAGS`) is true; a point written before the flag existed is not."""
    if name not in FLAGS:
        raise KeyError(name)
    return eq("flags", name)


STATE_FIELDS = ("file_path", "content_hash", "payload_hash", "source_hash")


def source_stamp(source_hash: str, chunks: int, file_path: str) -> str:
    """The `source_hash` key of a file's points: its source hash (`app.sync.localfs.source_hash`), chunk count and path.

    The count tells a file whose points were all written from one from one whose write stopped halfway
    (an interrupted `javakb index`): only the first is left unparsed by the next run. The path makes a
    repository's stamps, counted by one facet (`StateReads.stamp_counts`), tell every file's state without
    reading a payload.
    """
    return f"{source_hash}/{chunks}:{file_path}"


def read_stamp(stamp: str) -> tuple[str, int, str] | None:
    """A stamp's source hash, chunk count and path; None for none ("") and for one written before paths were in it."""
    head, sep, path = stamp.partition(":")  # a source hash is hex and a count digits: the first ':' ends them
    source_hash, _, chunks = head.rpartition("/")
    return (source_hash, int(chunks), path) if sep and path and source_hash and chunks.isdigit() else None


def stamped_source(stamp: str, points: int, file_path: str) -> str | None:
    """The source hash in a file's stamp when the file holds the `points` it was written with, else None."""
    parts = read_stamp(stamp)
    return parts[0] if parts is not None and parts[1:] == (points, file_path) else None


@dataclass(frozen=True, slots=True)
class StampedFiles:
    """A repository's files as its points' stamps tell them: the whole ones' source hashes, and every stamped path."""

    sources: dict[str, str]  # path -> source hash, of files whose points are all from one write of it
    points: dict[str, int]  # path -> its points (of every stamped path)


def stamped_files(counts: Mapping[str, int]) -> StampedFiles | None:
    """The files of a repository from the number of points per stamp; None if some point has no readable stamp.

    A point with no stamp (written by a sync from GitLab, or before paths were stamped) cannot be placed
    in a file this way: the caller then reads the whole stored state.
    """
    sources: dict[str, str] = {}
    points: dict[str, int] = {}
    stamps: dict[str, int] = {}
    for stamp, count in counts.items():
        parts = read_stamp(stamp)
        if parts is None:
            return None
        source_hash, chunks, path = parts
        points[path] = points.get(path, 0) + count
        stamps[path] = stamps.get(path, 0) + 1
        if chunks == count:
            sources[path] = source_hash
    whole = {path: h for path, h in sources.items() if stamps[path] == 1}  # a file written by two runs is not
    return StampedFiles(whole, points)


"""What the store's state scroll reads of each point (`VectorStore.stored_state`)."""


def read(payload: Mapping[str, Any], name: str) -> Any:
    """One payload key, converted as its field is declared; its declared default when the point lacks it.

    Raises:
        StorageError: the point lacks a field that has no default (it was not written by this service).
        KeyError: `name` is not a payload field (a programming error).
    """
    return _values(payload, (_CHUNK_FIELDS.get(name) or _STORE_FIELDS[name],))[name]


def read_fields(payload: Mapping[str, Any], names: Sequence[str]) -> tuple[Any, ...]:
    """Several payload keys at once, as `read` reads each (one pass: this runs for every member of a lookup)."""
    values = _values(payload, [_CHUNK_FIELDS.get(name) or _STORE_FIELDS[name] for name in names])
    return tuple(values[name] for name in names)


def _values(payload: Mapping[str, Any], specs: Iterable[_Field]) -> dict[str, Any]:
    """The named fields of a payload, converted and defaulted (one loop: this runs for every hit)."""
    out: dict[str, Any] = {}
    for spec in specs:
        value = payload.get(spec.name, _ABSENT)
        if value is _ABSENT:
            if spec.default is _REQUIRED:
                raise StorageError(f"a stored point has no {spec.name}: it was not written by this service")
            value = spec.default
        elif spec.convert is not None:
            try:
                value = spec.convert(value)
            except (TypeError, ValueError) as exc:
                raise StorageError(f"a stored point's {spec.name} is not what this service writes: {exc}") from exc
        out[spec.name] = value
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredChunk:
    """A stored point's payload, typed: the chunk as stored (its `text` is `STORED_TEXT`) and the store's keys."""

    chunk: Chunk
    keys: StoreKeys

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> StoredChunk:
        """Read a whole payload (every field; see `read` for conversions, defaults and errors)."""
        chunk = Chunk(**_values(payload, _CHUNK_SPECS), text=STORED_TEXT)
        return cls(chunk=chunk, keys=StoreKeys(**_values(payload, _STORE_SPECS)))


FILE_ORDER = "file_order"
"""The integer key a set lookup pages by (`Store.ordered_ids`): its range index orders without reading payloads."""
_FILE_BITS, _LINE_BITS, _PART_BITS = 42, 17, 4  # 63 bits: a non-negative int64 on every engine
FILE_ORDER_MAX = (1 << (_FILE_BITS + _LINE_BITS + _PART_BITS)) - 1


def file_order(repo_path: str, file_path: str, line_start: int, part_index: int) -> int:
    """A chunk's place in a set's pages: its file (a 42-bit digest of repository and path), then line, then part.

    Files come in the digest's fixed order, not by name (no integer keeps string order), each file's
    chunks together and by line. A digest shared by two files (about 1 in 4 million pairs) interleaves
    them; lines past 131,071 and parts past 15 share the last value. A rename leaves the key as it was:
    the order stays fixed, which is all a page needs.
    """
    digest = hashlib.blake2b(f"{repo_path}\0{file_path}".encode(), digest_size=8).digest()
    file_bits = int.from_bytes(digest) >> (64 - _FILE_BITS)
    line = min(max(line_start, 0), (1 << _LINE_BITS) - 1)
    return (((file_bits << _LINE_BITS) | line) << _PART_BITS) | min(part_index, (1 << _PART_BITS) - 1)


def stored_payload(chunk: Chunk, indexed_at: str, source_hash: str = "") -> dict[str, Any]:
    """The payload written for a chunk: its stored fields, then the store's keys derived from them.

    `source_hash` identifies the file's bytes as chunked (a local index passes it: an unchanged file is then
    not read again); the sync from GitLab leaves it empty.
    """
    record = chunk_record(chunk)
    for name in NOT_STORED:
        del record[name]
    order = file_order(chunk.repo_path, chunk.file_path, chunk.line_start, chunk.part_index)
    keys = StoreKeys(
        payload_hash=payload_hash(record | {FILE_ORDER: order}),  # a point written before the key gets it
        indexed_at=indexed_at,
        repo_prefixes=prefixes(chunk.repo_path),
        path_prefixes=prefixes(chunk.file_path),
        http_keys=tuple(sorted({key for path in chunk.http_path for key in route_keys(path)})),
        mapping_keys=tuple(sorted({key for path in mapping_paths(chunk) for key in route_keys(path)})),
        outbound_keys=outbound_keys(chunk.outbound),
        flags=tuple(name for name in FLAGS if getattr(chunk, name)),
        source_hash=source_hash,
        file_order=order,
    )
    return record | _json(keys)


def outbound_keys(outbound: tuple[str, ...]) -> tuple[str, ...]:
    """The route keys of a chunk's resolved calls, and the candidate keys of its unresolved ones' literal tails."""
    keys = {key for path in resolved_paths(outbound) for key in route_keys(path)}
    keys.update(key for tail in literal_tails(outbound) for key in candidate_keys(tail))
    return tuple(sorted(keys))


def mapping_paths(chunk: Chunk) -> tuple[str, ...]:
    """The paths of a handler's `routes_if_mapping` (`AnonymousPostMapping /auth/login` -> `/auth/login`)."""
    return tuple(dict.fromkeys(mapping_route(entry)[1] for entry in chunk.routes_if_mapping))


def repo_payload(repo_path: str) -> dict[str, Any]:
    """The payload keys that change when a project is renamed or transferred."""
    return {"repo_path": repo_path, "repo_prefixes": list(prefixes(repo_path))}


def commit_payload(commit_sha: str) -> dict[str, Any]:
    """The payload key that changes when a project's chunks are re-pointed at a new head."""
    return {"commit_sha": commit_sha}


def payload_hash(record: Mapping[str, Any]) -> str:
    """A digest of a chunk's stored metadata: equal digests mean its payload need not be rewritten."""
    return hashlib.sha1(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def prefixes(path: str) -> tuple[str, ...]:
    """`a/b/c.java` → `a/`, `a/b/`, and the path itself (so an exact path also matches)."""
    parts = path.split("/")
    return (*("/".join(parts[:i]) + "/" for i in range(1, len(parts))), path)


def _json(keys: StoreKeys) -> dict[str, Any]:
    return {
        name: list(value) if isinstance(value, tuple) else value
        for name in _STORE_FIELDS
        for value in (getattr(keys, name),)
    }
