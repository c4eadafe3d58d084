"""Base URLs and service names set in configuration, read at query time (issue 29).

A call whose base URL is a property (`pipeline.outbound.configured_route`: a `@Value("${visits.url}")` field
or parameter, `@FeignClient(url = "${...}")`, `@HttpExchange(url = "${...}")`) stores its placeholder as its
service. `Configured.resolve` reads the value from the configuration the caller may read, because the
configuration file and the Java file change independently, each synced file by file: the calling
application's own files first (its module's; a config repository's file for its `spring.application.name`;
a config repository's `application.yml`), then any other readable file; the default profile before the
others. A `${other.key}` inside the value is replaced once by that key's value (or its default); what that
gives is not expanded again. Without a setting, the placeholder's default is used, and said so; without a
default, the call names no service. `Configured.names` is each module's `spring.application.name`, which a
service named by a call is matched with (`app.search.links.serves_service`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.auth.access import Access
from app.search.config import (
    ALL_APPLICATIONS,
    APP_NAME,
    FIELD_NAME,
    KeyUse,
    Module,
    application_names,
    entries,
    module_of,
    where,
)
from app.search.hits import Hit
from app.search.reader import Reader
from app.search.scoping import Filters
from app.store.filters import any_of
from pipeline.config_keys import ConfigEntry, Use, canonical_key, placeholders
from pipeline.model import SymbolType
from pipeline.outbound import OutboundRoute, inline_defaults, is_configured
from pipeline.spring import join_path, split_url

MAX_SETTINGS = 500
"""The config chunks one resolution reads at most (per lookup; two lookups at most)."""
_PLACEHOLDER = re.compile(r"\$\{([^{}:]+)(?::([^{}]*))?\}")


@dataclass(frozen=True, slots=True)
class Configured:
    """The settings of the keys some calls' base URLs name, and every readable application's names."""

    settings: dict[str, list[KeyUse]]  # canonical key -> where it is set
    names: dict[Module, set[str]]
    bound: dict[str, str] = dataclasses.field(default_factory=dict)  # `Type.field` -> the key the field binds

    def value(self, key: str, caller: Hit) -> KeyUse | None:
        """The setting of `key` that applies to the caller's application (see the module docstring), if any."""
        uses = self.settings.get(canonical_key(key), [])
        own = module_of(caller)
        mine = self.names.get(own, set())

        def rank(use: KeyUse) -> tuple[int, bool, str]:
            served = (use.hit.chunk.enclosing_type or "").lower()
            if not served:
                scope = 0 if module_of(use.hit) == own else 3
            else:
                scope = 1 if served in mine else 2 if served == ALL_APPLICATIONS else 3
            return scope, use.entry.profile != "", use.entry.profile

        return min(uses, key=rank, default=None)

    def resolve(self, route: OutboundRoute, caller: Hit) -> tuple[OutboundRoute, tuple[str, ...]]:
        """A call with a configured base URL as the service and path it reaches, with the evidence; others as is."""
        if not is_configured(route.service) or not route.resolved:
            return route, ()
        placeholder = route.service or ""
        key, default = placeholders(placeholder)[0]
        if FIELD_NAME.fullmatch(key):  # `${ClientProperties.visitsUrl}`: a `@ConfigurationProperties` getter
            if key not in self.bound:
                return dataclasses.replace(route, service=None), (f"base URL from {key}: no binding of it is readable",)
            via, key = f"{key}, bound to ", self.bound[key]
        else:
            via = ""
        use = self.value(key, caller)
        if use is not None:
            text, said = self._expanded(use.entry.value, caller)
            evidence = f"base URL from {via}{where(use)}" + "".join(f"; {s}" for s in said)
        elif default:
            text = inline_defaults(default)
            evidence = f"base URL: {key} is set in no configuration the caller may read; its default {text}"
        else:
            unset = f"base URL: {key} is set in no configuration the caller may read, and has no default"
            return dataclasses.replace(route, service=None), (unset,)
        service, base = _base(text)
        _, default_base = _base(inline_defaults(default))
        path = route.path
        if default_base and (path == default_base or path.startswith(default_base + "/")):
            path = path[len(default_base) :] or "/"  # the stored path is under the default's path: replaced
        return dataclasses.replace(route, service=service, path=join_path(base, path)), (evidence,)

    def _expanded(self, value: str, caller: Hit) -> tuple[str, list[str]]:
        """A value with each `${key:default}` in it replaced once by that key's setting, else its default."""
        said: list[str] = []

        def one(match: re.Match[str]) -> str:
            use = self.value(match.group(1), caller)
            if use is not None:
                said.append(f"${{{match.group(1)}}} from {where(use)}")
                return use.entry.value
            return match.group(2) if match.group(2) is not None else match.group(0)

        return _PLACEHOLDER.sub(one, value), said


def _base(url: str) -> tuple[str | None, str]:
    """A base URL's service and path prefix (`http://visits:8080/api/` -> `visits`, `/api`); a non-URL: none."""
    service, path = split_url(url.strip())
    if path == url.strip():
        return None, ""
    return service, path.rstrip("/")


async def configured(reader: Reader, access: Access, routes: Iterable[OutboundRoute]) -> Configured:
    """The readable settings of the keys these calls' base URLs name (and of keys their values name), and names.

    One lookup, and a second only when a value found holds a placeholder of a key not yet read.
    """
    written = {k for r in routes if is_configured(r.service) for k, _ in placeholders(r.service or "")}
    bound = await _bound(reader, access, {k for k in written if FIELD_NAME.fullmatch(k)})
    keys = {canonical_key(bound.get(k, k)) for k in written}
    found = await _settings(reader, access, {*keys, canonical_key(APP_NAME)})
    nested = {
        canonical_key(k)
        for _, entry in found
        if entry.use is Use.SET and canonical_key(entry.key) in keys
        for k, _ in placeholders(entry.value)
    } - keys
    if nested:
        found.extend(await _settings(reader, access, nested))
    settings: dict[str, list[KeyUse]] = {}
    for hit, entry in found:
        if entry.use is Use.SET:
            settings.setdefault(canonical_key(entry.key), []).append(KeyUse(hit, entry))
    return Configured(settings=settings, names=application_names(found), bound=bound)


async def _bound(reader: Reader, access: Access, fields: set[str]) -> dict[str, str]:
    """`Type.field` -> the key that `@ConfigurationProperties` field binds, for the types the caller may read."""
    if not fields:
        return {}
    types = sorted({f.rsplit(".", 1)[0] for f in fields})
    hits = await reader.lookup(access, Filters(), any_of("name", types), limit=MAX_SETTINGS)
    out: dict[str, str] = {}
    for hit, entry in entries(hits):
        name = f"{hit.chunk.name}.{entry.value}"
        if entry.use is Use.BIND and entry.value and name in fields:
            out.setdefault(name, entry.key)
    return out


async def _settings(reader: Reader, access: Access, keys: set[str]) -> list[tuple[Hit, ConfigEntry]]:
    hits = await reader.lookup(
        access, Filters(symbol_type=SymbolType.CONFIG), any_of("config_keys", sorted(keys)), limit=MAX_SETTINGS
    )
    return list(entries(hits))
