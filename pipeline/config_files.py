"""Spring configuration files to chunks (issue 29): `application*` / `bootstrap*` `.yml`, `.yaml`, `.properties`.

Every key a file sets is flattened (`a.b`, lists as `a.b[0]`) with its value, its profile (from the file
name, `application-dev.yml`, or a document's `spring.config.activate.on-profile`, or the older `spring.profiles`)
and its line. The keys of one document under one top-level name (`server`, `spring`, `payment`) make one
`config` chunk (parts when over the token budget); its code is the flattened `key: value` lines, never the
file's text, so a comment or a secret value is never stored: values go through `config_keys.masked` first.
Bad input (binary, too large, not UTF-8, broken YAML) is a `Skipped` with its reason, never an exception; a
YAML error's reason names the line and the problem, never the line's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import PurePosixPath

import yaml

from pipeline.config_keys import ConfigEntry, Use, masked
from pipeline.config_reads import keyed
from pipeline.model import (
    Chunk,
    ChunkerConfig,
    FileResult,
    Skipped,
    SkipReason,
    SourceContext,
    SymbolType,
)
from pipeline.render import chunk_id_in, chunk_id_prefix, content_hash, embedding_text, repo_key
from pipeline.scope import glob_to_regex
from pipeline.source import decode_source
from pipeline.splitting import estimate_tokens

CONFIG_FILE = re.compile(r"(?:application|bootstrap)(?:-(?P<profile>[^/]+?)|[^/]*?)\.(?P<kind>ya?ml|properties)")
"""A configuration file's name (no folder); `profile` is the profile its name gives."""
PROFILE_KEYS = ("spring.config.activate.on-profile", "spring.profiles")
"""The keys that make a document profile-specific (Spring Boot 2.4+, then the older form)."""
MAX_KEYS = 20_000  # a file with more (an alias bomb, a generated dump) is skipped whole
MAX_DEPTH = 64
MAX_VALUE_CHARS = 300  # a longer value (a certificate, a script) is cut: an answer needs its start
_DOCUMENT = re.compile(r"[#!]---\s*")
PROFILE_NAMES = frozenset(
    {
        "dev",
        "development",
        "local",
        "test",
        "testing",
        "qa",
        "uat",
        "int",
        "integration",
        "stage",
        "staging",
        "preprod",
        "prod",
        "production",
        "docker",
        "k8s",
        "kubernetes",
        "cloud",
        "native",
        "default",
        "ci",
        "demo",
        "h2",
        "mysql",
        "postgres",
        "aws",
        "azure",
        "gcp",
    }
)
"""The profile names a config repository's file name is read with (`config_repo_file`)."""


class ConfigError(ValueError):
    """A configuration file that cannot be read; its message is the skip's reason (names no value)."""


def is_config_file(file_path: str, config: ChunkerConfig | None = None) -> bool:
    """Whether a path names a Spring configuration file: by its name, or in a config repository (`config_repos`)."""
    named = CONFIG_FILE.fullmatch(PurePosixPath(file_path).name) is not None
    return named or (config is not None and config_repo_file(file_path, config) is not None)


def config_repo_file(file_path: str, config: ChunkerConfig) -> tuple[str, str] | None:
    """(application, profile) of a Spring Cloud Config repository file (`ChunkerConfig.config_repos`); else None.

    The server serves `<application>-<profile>.yml` and `<application>.yml` to the application so named
    (`application.yml`: to every one). A name alone cannot say where the application ends (`account-service`),
    so a last `-` part is a profile only when it is a usual profile name (`PROFILE_NAMES`).
    """
    path = PurePosixPath(file_path)
    kind = path.suffix.lstrip(".")
    if kind not in ("yml", "yaml", "properties") or not any(
        glob_to_regex(p).match(file_path) for p in config.config_repos
    ):
        return None
    application, _, last = path.stem.rpartition("-")
    if application and last.lower() in PROFILE_NAMES:
        return application, last
    return path.stem, ""


def chunk_config(raw: bytes, file_path: str, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """One configuration file's `config` chunks; bad input as a `Skipped` (never raised).

    A config repository's file (`config_repo_file`) has the application it configures as each chunk's
    `enclosing_type`; a service's own file has none (its module is the application).
    """
    decoded = decode_source(raw, file_path, config)
    if isinstance(decoded, Skipped):
        return FileResult(file_path=file_path, skipped=(decoded,))
    text = decoded.data.decode("utf-8")
    served = config_repo_file(file_path, config)
    name = CONFIG_FILE.fullmatch(PurePosixPath(file_path).name)
    assert name is not None or served is not None  # the caller asked `is_config_file`
    profile = served[1] if served is not None else name["profile"] or "" if name is not None else ""
    properties = file_path.endswith(".properties")
    try:
        entries = read_entries(text, properties, profile)
    except ConfigError as exc:
        skip = Skipped(file_path=file_path, reason=SkipReason.SYNTAX_ERROR, detail=str(exc))
        return FileResult(file_path=file_path, skipped=(skip,), encoding=decoded.encoding, parse_errors=True)
    application = served[0] if served is not None else None
    chunks = tuple(_chunks(entries, file_path, context, config, application))
    return FileResult(file_path=file_path, chunks=chunks, encoding=decoded.encoding)


def read_entries(text: str, properties: bool, file_profile: str) -> list[tuple[int, ConfigEntry]]:
    """(document, entry) for every key a file sets, values masked, in file order.

    Raises:
        ConfigError: broken YAML, or more keys or nesting than a configuration file has.
    """
    documents = _properties(text) if properties else _yaml(text)
    out: list[tuple[int, ConfigEntry]] = []
    for index, document in enumerate(documents):
        values = {key: value for key, value, _ in document}
        active = next((values[k] for k in PROFILE_KEYS if k in values), None)
        profile = active if active is not None else file_profile
        out.extend(
            (index, ConfigEntry(use=Use.SET, key=key, value=_cut(masked(key, value)), profile=profile, line=line))
            for key, value, line in document
        )
        if len(out) > MAX_KEYS:
            raise ConfigError(f"more than {MAX_KEYS} keys")
    return out


Document = list[tuple[str, str, int]]  # (key, value, line)


def _yaml(text: str) -> list[Document]:
    documents: list[Document] = []
    try:
        for root in yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            document: Document = []
            if root is not None:
                _flatten(root, "", 0, document)
            documents.append(document)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"broken YAML{where}: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"broken YAML: {type(exc).__name__}") from None
    return documents


def _flatten(node: yaml.Node, prefix: str, depth: int, out: Document) -> None:
    if depth > MAX_DEPTH:
        raise ConfigError(f"nested deeper than {MAX_DEPTH} levels")
    if len(out) > MAX_KEYS:
        raise ConfigError(f"more than {MAX_KEYS} keys")
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                _flatten(value_node, prefix, depth + 1, out)  # `<<: *defaults`: its keys are this mapping's
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
            if isinstance(value_node, yaml.ScalarNode):
                out.append((key, _scalar(value_node), key_node.start_mark.line + 1))
            else:
                _flatten(value_node, key, depth + 1, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            key = f"{prefix}[{i}]"
            if isinstance(item, yaml.ScalarNode):
                out.append((key, _scalar(item), item.start_mark.line + 1))
            else:
                _flatten(item, key, depth + 1, out)
    elif isinstance(node, yaml.ScalarNode) and prefix:
        out.append((prefix, _scalar(node), node.start_mark.line + 1))


def _scalar(node: yaml.ScalarNode) -> str:
    return "" if node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~", "null") else str(node.value)


def _properties(text: str) -> list[Document]:
    """A `.properties` file's documents (`#---` separates them, Spring Boot 2.4+): logical lines, `key=value`."""
    documents: list[Document] = [[]]
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        first = i
        line = lines[i].lstrip(" \t\f").rstrip("\r")
        i += 1
        if _DOCUMENT.fullmatch(line):
            documents.append([])
            continue
        if not line or line[0] in "#!":
            continue
        while _continued(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f").rstrip("\r")
            i += 1
        key, value = _split_property(line)
        if key:
            documents[-1].append((key, value, first + 1))
    return documents


def _continued(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line) and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _cut(value: str) -> str:
    value = value.replace("\n", "\\n")
    return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"


def _top(key: str) -> str:
    return re.split(r"[.\[]", key, maxsplit=1)[0] or key


def _chunks(
    entries: list[tuple[int, ConfigEntry]],
    file_path: str,
    context: SourceContext,
    config: ChunkerConfig,
    application: str | None,
) -> Iterator[Chunk]:
    groups: dict[tuple[int, str], list[ConfigEntry]] = {}
    for document, entry in entries:
        groups.setdefault((document, _top(entry.key)), []).append(entry)
    prefix = chunk_id_prefix(repo_key(context.repo_path, context.gitlab_project_id), file_path)
    base = PurePosixPath(file_path).name
    names: dict[str, int] = {}
    for (_, top), group in groups.items():
        profile = group[0].profile
        qualified = f"{top}[{profile}]" if profile else top
        names[qualified] = seen = names.get(qualified, 0) + 1
        qualified = qualified if seen == 1 else f"{qualified}#{seen}"
        parts = _parts(group, config.max_chunk_tokens)
        for index, part in enumerate(parts):
            keys, encoded = keyed(part)
            chunk = Chunk(
                id="", repo_path=context.repo_path, gitlab_project_id=context.gitlab_project_id,
                commit_sha=context.commit_sha, branch=context.branch, file_path=file_path, package="",
                qualified_name=qualified, symbol_type=SymbolType.CONFIG, name=top,
                signature=_signature(base, application, profile), enclosing_type=application,
                config_keys=keys, config=encoded, line_start=min(e.line for e in part),
                line_end=max(e.line for e in part), part_index=index, part_count=len(parts), content_hash="",
                language="properties" if base.endswith(".properties") else "yaml", library=context.library,
                code="\n".join(f"{e.key}: {e.value}" for e in part), text="",
            )  # fmt: skip
            text = embedding_text(chunk)
            chunk_id = chunk_id_in(prefix, f"config:{qualified}", index)
            yield replace(chunk, id=chunk_id, text=text, content_hash=content_hash(text))


def _signature(base: str, application: str | None, profile: str) -> str:
    said = ([f"application {application}"] if application else []) + ([f"profile {profile}"] if profile else [])
    return f"{base} ({', '.join(said)})" if said else base


def _parts(group: list[ConfigEntry], budget: int) -> list[list[ConfigEntry]]:
    """The group's entries in runs whose `key: value` lines fit the token budget (at least one entry each)."""
    parts: list[list[ConfigEntry]] = [[]]
    used = 0
    for entry in group:
        cost = estimate_tokens(f"{entry.key}: {entry.value}") + 1
        if parts[-1] and used + cost > budget:
            parts.append([])
            used = 0
        parts[-1].append(entry)
        used += cost
    return parts
