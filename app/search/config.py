"""Spring configuration keys (issue 29): where a key is set, who reads it, and the route prefixes a service's files set.

Every read is one store lookup on the `config_keys` field (`pipeline.config_keys.canonical_key`'s form, so
`a.b-c`, `a.bC` and `A_BC` ask alike) inside the caller's filter (`Reader.lookup`): a key or a value of a
project the caller may not read is never seen. Values are as stored: a secret is `SECRET_MARKER` already.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from app.auth.access import Access
from app.search.hits import Citation, Hit
from app.search.reader import Reader
from app.search.scoping import Filters
from app.store.filters import any_of, eq
from app.store.routes import application
from pipeline.config_keys import ConfigEntry, Use, canonical_key
from pipeline.model import SymbolType

MAX_CONFIG_HITS = 500
"""The chunks one key's answer reads at most (settings and readers together)."""
CONTEXT_PATH = "server.servlet.context-path"
SERVLET_PATH = "spring.mvc.servlet.path"
_ROUTE_KEYS = (canonical_key(CONTEXT_PATH), canonical_key(SERVLET_PATH))
APP_NAME = "spring.application.name"
_APP_NAME = canonical_key(APP_NAME)
FIELD_NAME = re.compile(r"(?:[a-z_$][\w$]*\.)*(?P<type>[A-Z][\w$]*)\.(?P<field>[a-z_$][\w$]*)")
"""`PaymentProperties.timeoutMs` (a package before it allowed): a `@ConfigurationProperties` field, not a key."""


@dataclass(frozen=True, slots=True)
class KeyUse:
    """One fact about a key: a file that sets it (`Use.SET`) or code that reads it, with its chunk."""

    hit: Hit
    entry: ConfigEntry

    @property
    def profile(self) -> str:
        """The profile a setting applies in ("default" for none)."""
        return self.entry.profile or "default"


@dataclass(frozen=True, slots=True)
class KeyAnswer:
    """Where a key is set (by profile, file order) and who reads it."""

    key: str  # canonical
    settings: list[KeyUse]
    readers: list[KeyUse]


def ancestors(key: str) -> list[str]:
    """`a.b[0].c` -> `a.b[0]`, `a.b`, `a`: the prefixes a `@ConfigurationProperties` class may bind the key under."""
    out: list[str] = []
    cut = len(key)
    while True:
        cut = max(key.rfind(".", 0, cut), key.rfind("[", 0, cut))
        if cut <= 0:
            return out
        out.append(key[:cut])


async def find_config(
    reader: Reader, access: Access, key: str, repo: str | None = None, *, path_prefix: str | None = None
) -> KeyAnswer:
    """Where `key` is set and who reads it, in the projects the caller may read.

    A reader is code that names the key (`@Value`, `getProperty`, a `@ConfigurationProperties` field) or
    binds a prefix of it (a `@ConfigurationProperties(prefix)` class or `@Bean` method). `key` may name a
    readable `@ConfigurationProperties` field instead (`PaymentProperties.timeoutMs`): its key is answered.
    """
    field = FIELD_NAME.fullmatch(key)
    if field is not None:
        where = Filters(repo=repo, path_prefix=path_prefix)
        types = await reader.lookup(access, where, eq("name", field["type"]))
        bound = [e.key for _, e in entries(types) if e.use is Use.BIND and e.value == field["field"]]
        key = bound[0] if bound else key
    wanted = canonical_key(key)
    above = ancestors(wanted)
    hits = await reader.lookup(
        access,
        Filters(repo=repo, path_prefix=path_prefix),
        any_of("config_keys", [wanted, *above]),
        limit=MAX_CONFIG_HITS,
    )
    settings: list[KeyUse] = []
    readers: list[KeyUse] = []
    binds: list[KeyUse] = []  # prefixes bound: shown for a chunk that names the key itself in no entry
    prefixes = set(above)
    for hit, entry in entries(hits):
        canonical = canonical_key(entry.key)
        if entry.use is Use.SET:
            if canonical == wanted:
                settings.append(KeyUse(hit, entry))
        elif canonical == wanted:
            readers.append(KeyUse(hit, entry))
        elif entry.use is Use.BIND and not entry.value and canonical in prefixes:
            binds.append(KeyUse(hit, entry))
    named = {u.hit.id for u in readers}
    readers.extend(u for u in binds if u.hit.id not in named)
    settings.sort(key=lambda u: (u.entry.profile != "", u.entry.profile, u.hit.repo_path, u.hit.file_path))
    return KeyAnswer(key=wanted, settings=settings, readers=readers)


def entries(hits: Sequence[Hit]) -> Iterator[tuple[Hit, ConfigEntry]]:
    """Each hit's `config` entries, decoded (an entry this service does not write is passed over)."""
    for hit in hits:
        for text in hit.chunk.config:
            try:
                yield hit, ConfigEntry.decode(text)
            except ValueError:
                continue  # not what this service writes: nothing to say about it


ALL_APPLICATIONS = "application"
"""A config repository's `application.yml` (`enclosing_type` `application`) configures every application."""
Module = tuple[str, str]  # (repository, `app.store.routes.application` of a file): one deployable application


def module_of(hit: Hit) -> Module:
    """The application a chunk belongs to: its repository and build module folder."""
    return hit.repo_path, application(hit.file_path)


def application_names(uses: Iterable[tuple[Hit, ConfigEntry]]) -> dict[Module, set[str]]:
    """The `spring.application.name` each application's own files give it (any profile), by module."""
    names: dict[Module, set[str]] = {}
    for hit, entry in uses:
        served = hit.chunk.enclosing_type  # a config repository's file names the application it configures
        if entry.use is Use.SET and canonical_key(entry.key) == _APP_NAME and entry.value and served is None:
            names.setdefault(module_of(hit), set()).add(entry.value.strip().lower())
    return names


def owners(hit: Hit, names: dict[Module, set[str]]) -> list[Module]:
    """The applications a config chunk configures: its own module, or those a config repository's file names."""
    served = hit.chunk.enclosing_type
    if served is None:
        return [module_of(hit)]
    wanted = served.lower()
    return [m for m, named in names.items() if wanted == ALL_APPLICATIONS or wanted in named]


def where(use: KeyUse) -> str:
    """A setting as evidence: `server.servlet.context-path = /accounts (repo:file:line, profile default)`."""
    hit, entry = use.hit, use.entry
    return f"{entry.key} = {entry.value} ({hit.repo_path}:{hit.file_path}:{entry.line}, profile {use.profile})"


async def route_prefixes(reader: Reader, access: Access, repo: str | None = None) -> dict[Module, dict[str, str]]:
    """The path prefixes each application's configuration gives its routes (any profile), by module, with evidence.

    `server.servlet.context-path` and `spring.mvc.servlet.path` (the one, the other, and both joined, Spring
    MVC's order); an application sets none: no entry. The module is `app.store.routes.application` of the
    file, or, for a Spring Cloud Config repository's file, each module whose `spring.application.name` the
    file names (`owners`). Each prefix maps to where it is set (`where`). `repo` narrows the handlers' side:
    a config repository may be another project.
    """
    hits = await reader.lookup(
        access, Filters(symbol_type=SymbolType.CONFIG), any_of("config_keys", [*_ROUTE_KEYS, _APP_NAME])
    )
    uses = list(entries(hits))
    names = application_names(uses)
    found: dict[Module, dict[str, dict[str, str]]] = {}
    for hit, entry in uses:
        canonical = canonical_key(entry.key)
        value = _path(entry.value)
        if entry.use is Use.SET and canonical in _ROUTE_KEYS and value:
            for module in owners(hit, names):
                if repo is None or module[0] == repo:
                    found.setdefault(module, {}).setdefault(canonical, {}).setdefault(value, where(KeyUse(hit, entry)))
    out: dict[Module, dict[str, str]] = {}
    for module, by_key in found.items():
        contexts = by_key.get(_ROUTE_KEYS[0], {})
        servlets = by_key.get(_ROUTE_KEYS[1], {})
        joined = {c + s: f"{contexts[c]}; {servlets[s]}" for c in contexts for s in servlets}
        out[module] = {**contexts, **servlets, **joined}
    return out


def _path(value: str) -> str:
    """A configured path as a prefix: `/api/` -> `/api`, `/` and placeholders -> "" (no prefix known)."""
    value = value.strip()
    if not value.startswith("/") or "${" in value:
        return ""
    return value.rstrip("/")


class ConfigItem(Citation):
    """One fact of a key's answer, as REST and MCP give it: where (a setting's own line), what and how."""

    use: str  # `pipeline.config_keys.Use`: set, value, bind, get
    key: str  # as written there
    profile: str | None  # a setting's profile ("default" for none); None for a reader
    value: str | None  # a setting's value (secrets as `SECRET_MARKER`), or a `@Value`'s default
    field: str | None  # a `@ConfigurationProperties` field bound to the key


def config_item(use: KeyUse) -> ConfigItem:
    """The structured form of one fact (a setting is cited at its own line)."""
    entry, citation = use.entry, use.hit.citation()
    if entry.use is Use.SET and entry.line:
        citation["line_start"] = citation["line_end"] = entry.line
        link = citation["permalink"]
        citation["permalink"] = f"{link.rsplit('#L', 1)[0]}#L{entry.line}" if link else None
    setting = entry.use is Use.SET
    return ConfigItem(
        **citation,
        use=entry.use.value,
        key=entry.key,
        profile=use.profile if setting else None,
        value=entry.value if setting or (entry.use is Use.VALUE and entry.value) else None,
        field=entry.value if entry.use is Use.BIND and entry.value else None,
    )


def config_line(item: ConfigItem) -> str:
    """One fact as a line: `[dev] svc/src/main/resources/application-dev.yml:12  payment.timeout = 30`."""
    place = f"{item['repo_path']}:{item['file_path']}:{item['line_start']}"
    if item["use"] == Use.SET:
        return f"[{item['profile']}] {place}  {item['key']} = {item['value']}"
    how = {Use.VALUE: "@Value", Use.BIND: "@ConfigurationProperties", Use.GET: "getProperty"}[Use(item["use"])]
    extra = f" field {item['field']}" if item["field"] else ""
    extra += f" default {item['value']}" if item["value"] is not None else ""
    return f"{how} {item['key']}{extra}  in {item['qualified_name']} ({place}-{item['line_end']})"
