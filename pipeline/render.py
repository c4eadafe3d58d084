"""The text a chunk is embedded as, its content hash and its stable id.

The header is a view of the chunk's own fields (`pipeline.model.Chunk`): `embedding_text` reads them
from the chunk, and its labels are named here once (`app.store.lexical` weighs the lines by them).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

from pipeline.glossary import gloss
from pipeline.model import Chunk
from pipeline.outbound import decode

# Fixed forever: changing it changes every point id in every collection.
ID_NAMESPACE = uuid.UUID("6f1d3c2a-8a4e-5b7f-9c0d-1e2f3a4b5c6d")
_NAMESPACE_BYTES = ID_NAMESPACE.bytes
_MAX_CALLS_IN_HEADER = 24

REPOSITORY, PACKAGE, SYMBOL, WORDS, KIND = "repository", "package", "symbol", "words", "kind"
SIGNATURE, ANNOTATIONS, HTTP, HTTP_CALLS, CALLS = "signature", "annotations", "http", "http calls", "calls"
SUMMARY, TYPE_SUMMARY, GLOSS, DESCRIPTION = "summary", "type summary", "gloss", "description"
LABELS = (
    REPOSITORY, PACKAGE, SYMBOL, WORDS, KIND, SIGNATURE, ANNOTATIONS, HTTP, HTTP_CALLS, SUMMARY, TYPE_SUMMARY, GLOSS,
    DESCRIPTION, CALLS,
)  # fmt: skip
"""The header's line labels, in the order the lines appear: the words a question uses come before
`calls`, the longest line, as small embedding models read only the first 256 or 512 tokens."""
DENSE_ONLY = frozenset({WORDS})
"""Lines that restate another line's identifiers as words, for the dense model: lexical search splits
identifiers itself (`app.store.lexical`) and skips them."""
LEXICAL_ONLY = frozenset({REPOSITORY, PACKAGE, SYMBOL})
"""Lines that place the chunk by dotted names, left out of what a model reads (`model_text`): the lexical
index matches them exactly, but a small embedding model reads the same package tokens in every chunk of a
package, and they drown the chunk's own words (dense R@5 on the real suite's hand-written chunks 0.61 ->
0.73 without them, docs/performance.md). The `words` line keeps the symbol's own words."""
TEXT_FORM = "2"
"""The version of what an embedding text becomes for a model (`model_text`), part of every content hash:
raising it makes every stored vector stale. `javakb index` then re-embeds every file (the chunker's code
changed too); the service re-embeds a project's files on `POST /admin/reindex` with `"full": true`, and
any other file when it next changes (docs/operations.md, "Upgrades")."""
IDENTIFIER_PART = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""Parts of an ASCII identifier, tried in order: a plural acronym (`URLs`), an acronym followed by a
word (`HTTP` in `HTTPServer`), a capitalised or lowercase word, a trailing acronym, a digit run.
`_` and `$` match nothing, so they separate parts."""
SEPARATOR = "\n---\n"
"""Between the header and the code."""
_REPO_LABEL = f"{REPOSITORY}: "
_FORM_PREFIX = f"form {TEXT_FORM}\n".encode()


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
    """sha256 of `TEXT_FORM` and the text without its `repository:` line: equal hashes mean a vector can be reused.

    The repository line is left out so that a project rename or transfer, which rewrites only the
    payload, leaves every hash (and so every stored vector) valid.
    """
    data = text.encode()
    digest = hashlib.sha256(_FORM_PREFIX)
    if text.startswith(_REPO_LABEL):  # hash past the first line's newline, without copying the rest
        digest.update(memoryview(data)[data.index(b"\n") + 1 :])
    else:
        digest.update(data)
    return digest.hexdigest()


def model_text(text: str) -> str:
    """What an embedding model reads of an embedding text: without the `LEXICAL_ONLY` lines, calls as words.

    The `calls` line names each called method by its words once (`calls: get current member, insert`)
    instead of its dotted chains, which spend a small model's few hundred tokens on receiver types.
    """
    header, separator, code = text.partition(SEPARATOR)
    if not separator:
        return text
    kept: list[str] = []
    for line in header.split("\n"):
        label, colon, value = line.partition(": ")
        if colon and label in LEXICAL_ONLY:
            continue
        kept.append(f"{CALLS}: {called_words(value)}" if colon and label == CALLS else line)
    return "\n".join(kept) + separator + code


def called_words(calls_line: str) -> str:
    """`A.getId, A.b().getId, List.get (+3 more)` → `get id, get`: each called method's words, once."""
    shown = calls_line.rsplit(" (+", 1)[0] if calls_line.endswith(" more)") else calls_line
    phrases = (" ".join(_segment_words(call.rsplit(".", 1)[-1])) for call in shown.split(", "))
    return ", ".join(dict.fromkeys(p for p in phrases if p))


def repo_key(repo_path: str, gitlab_project_id: int | None) -> str:
    """The repository part of a chunk id: the GitLab project id when known (a path changes on rename)."""
    return f"gitlab:{gitlab_project_id}" if gitlab_project_id is not None else repo_path


def embedding_text(chunk: Chunk, type_summary: str | None = None) -> str:
    """A short structured header, a `---` line, then the code.

    The header carries the words a natural-language question uses (roles, routes, summary) that
    the code's identifiers may not contain: the symbol's identifiers split into words, its Javadoc
    summary and, for a member, `type_summary`, the Javadoc summary of the type that declares it, and
    the English of the Chinese words in those and in the code's comments and strings (`gloss`). It
    holds no line numbers or commit, so a chunk whose code did not change keeps its text, hash and
    vector when other code moves around it (a changed type Javadoc changes its members' texts too).
    """
    kind: str = chunk.symbol_type  # a StrEnum formats as its value
    if chunk.stereotype:
        kind = f"{kind} ({chunk.stereotype})"
    if chunk.part_count > 1:
        kind += f" (part {chunk.part_index + 1} of {chunk.part_count})"
    # Appending only the lines that are present, then one join, is the cheapest form measured.
    lines = [f"{_REPO_LABEL}{chunk.repo_path}"]
    if chunk.package:
        lines.append(f"{PACKAGE}: {chunk.package}")
    lines.append(f"{SYMBOL}: {chunk.qualified_name}")
    if words := identifier_words(chunk.qualified_name[len(chunk.package) + 1 if chunk.package else 0 :]):
        lines.append(f"{WORDS}: {words}")
    lines.append(f"{KIND}: {kind}")
    lines.append(f"{SIGNATURE}: {chunk.signature}")
    if chunk.annotations:
        lines.append(f"{ANNOTATIONS}: {' '.join(chunk.annotations)}")
    if chunk.http_path:
        lines.append(f"{HTTP}: {'|'.join(chunk.http_method)} {', '.join(chunk.http_path)}")
    if chunk.outbound:
        lines.append(f"{HTTP_CALLS}: {'; '.join(_http_call(route) for route in chunk.outbound)}")
    if chunk.javadoc_summary:
        lines.append(f"{SUMMARY}: {chunk.javadoc_summary}")
    if type_summary:
        lines.append(f"{TYPE_SUMMARY}: {type_summary}")
    if english := gloss(chunk.javadoc_summary, chunk.code, type_summary):  # its own words first
        lines.append(f"{GLOSS}: {english}")
    if chunk.calls:
        lines.append(_calls_line(chunk.calls))
    return "\n".join(lines) + SEPARATOR + chunk.code


def _http_call(stored: str) -> str:
    """An outbound route in words: `HTTP POST /uaa/users to auth-service (feign)`.

    The service a call names is often the only place a microservice's name appears ("where does the
    account service ask the auth service..."), and "HTTP" is how a question says the call leaves the process.
    """
    route = decode(stored)
    target = f" to {route.service}" if route.service else ""
    return f"HTTP {route.method} {route.path}{target} ({route.client})"


def with_description(text: str, description: str) -> str:
    """An embedding text with a `description` line (a model's words for the chunk) before its `calls` line.

    The content hash stays that of the text without it (`content_hash` is taken before), so an
    unchanged chunk keeps its stored vector and is never described twice.
    """
    header, separator, code = text.partition(SEPARATOR)
    if not separator:
        return text
    lines = header.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(f"{CALLS}: ")), len(lines))
    lines.insert(at, f"{DESCRIPTION}: {' '.join(description.split())}")
    return "\n".join(lines) + separator + code


def identifier_words(name: str) -> str:
    """The words of a dotted name's identifiers, lowercased, each once.

    `OrderServiceImpl.getTotal` gives `order service impl get total`, `Account.save` gives
    `account save`: the only place a model reads the symbol's name (`model_text` drops the `symbol` line).
    """
    # `map` and `chain` keep the loop in C: a generator here cost about 2% of the pipeline (callgrind subset).
    return " ".join(dict.fromkeys(chain.from_iterable(map(_segment_words, name.split(".")))))


@lru_cache(maxsize=1 << 14)
def _segment_words(segment: str) -> tuple[str, ...]:
    # Type names repeat in every member of their type: the cache answers most segments.
    return tuple(part.lower() for part in IDENTIFIER_PART.findall(segment)) if segment.isascii() else ()


def _calls_line(calls: Sequence[str]) -> str:
    shown = ", ".join(calls[:_MAX_CALLS_IN_HEADER])
    more = len(calls) - _MAX_CALLS_IN_HEADER
    return f"{CALLS}: {shown}" + (f" (+{more} more)" if more > 0 else "")
