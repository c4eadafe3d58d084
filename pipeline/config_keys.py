"""Spring configuration keys (issue 29): their one canonical form, which values are secret, and how entries are stored.

`canonical_key` is the only comparison of keys: Spring's relaxed binding (`a.b-c`, `a.bC`, `a.b_c` and
the environment form `A_BC` name one property) reduced to one string, kept in `Chunk.config_keys` and asked
for by `find_config`. Secrets never leave this module: `masked` replaces the value of a key that looks
secret, and the credentials of a URL in any value, by `SECRET_MARKER`, before a value reaches a chunk.

A chunk's `config` entries are tab-separated strings, one per fact, declared by `ConfigEntry`:
`set` (a file sets the key: profile, line, value), `value` (`@Value("${key:default}")`), `bind` (a
`@ConfigurationProperties` field) and `get` (`Environment.getProperty("key")`).
"""

from __future__ import annotations

import enum
import re
from typing import NamedTuple

SECRET_MARKER = "<secret>"
"""What a secret value is stored and shown as."""

_SECRET_WORDS = re.compile(r"password|passwd|pwd|secret|token|credential|private")
_SECRET_LEAF = re.compile(r"key")  # `api-key`, `secret-key`: only the last name (`key-serializer` too, harmlessly)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][\w+.-]*://)(?P<user>[^/\s:@]*):(?P<password>[^/\s@]*)@")
_SECRET_PARAM = re.compile(r"(?i)(?P<name>[\w.-]*(?:password|secret|token|key)[\w.-]*=)(?P<value>[^&;\s]+)")
_REFERENCE = re.compile(r"\$\{[^:}]+\}")  # `${DB_PASSWORD}`: names where the value comes from, holds none
_ENV_FORM = re.compile(r"[A-Z0-9_]+")
_ELEMENT = re.compile(r"\[[^\]]*\]|[^.\[\]]+")


class Use(enum.StrEnum):
    """What a `config` entry says about its key."""

    SET = "set"  # a configuration file sets it
    VALUE = "value"  # `@Value("${key}")` reads it
    BIND = "bind"  # a `@ConfigurationProperties` field is bound to it
    GET = "get"  # `Environment.getProperty("key")` reads it


class ConfigEntry(NamedTuple):
    """One `config` entry of a chunk: `use`, the key as written, and per use: profile, line, value or default, field."""

    use: Use
    key: str
    value: str = ""  # SET: the value (masked); VALUE: the default after `:`; BIND: the field's name
    profile: str = ""  # SET: the profile ("" for the default one)
    line: int = 0  # SET: the line of the key in its file

    def encode(self) -> str:
        """The stored string (the value last: it may hold a tab)."""
        return f"{self.use}\t{self.key}\t{self.profile}\t{self.line}\t{self.value}"

    @classmethod
    def decode(cls, text: str) -> ConfigEntry:
        """An entry from its stored string.

        Raises:
            ValueError: the text is not an encoded entry.
        """
        use, key, profile, line, value = text.split("\t", 4)
        return cls(use=Use(use), key=key, value=value, profile=profile, line=int(line))


def canonical_key(name: str) -> str:
    """The one form of a property name every spelling binds to: `A_BC`, `a.b-c`, `a.bC`, `a.b_c` -> `a.bc`.

    Spring's relaxed binding: elements are compared lowercase without `-` and `_`; an environment variable
    (upper case, digits and `_`) has `_` for `.`, and a number element is a list index (`A_0_B` -> `a[0].b`).
    Map keys in brackets (`a[x.y]`) stay as written.
    """
    name = name.strip()
    if _ENV_FORM.fullmatch(name) and name.upper() == name and any(c.isalpha() for c in name):
        parts = [p for p in name.lower().split("_") if p]
        return _join_env(parts)
    out: list[str] = []
    for element in _ELEMENT.findall(name):
        if element.startswith("["):
            inner = element[1:-1]
            out.append(f"[{inner}]" if inner.isdigit() else f"[{inner.lower()}]")
        else:
            out.append("." + element.lower().replace("-", "").replace("_", ""))
    return "".join(out).lstrip(".")


def _join_env(parts: list[str]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if part.isdigit() and out else f".{part}"
    return out.lstrip(".")


def key_of_field(prefix: str, field: str) -> str:
    """The key a `@ConfigurationProperties(prefix)` field binds to, in Spring's kebab case: `a.b` + `smtpHost`."""
    kebab = re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", field).lower()
    return f"{prefix.strip('.')}.{kebab}" if prefix.strip(".") else kebab


def looks_secret(key: str) -> bool:
    """Whether a key's value is secret: a name with password, secret, token, credential(s); a last name with key."""
    elements = [e for e in canonical_key(key).replace("[", ".[").split(".") if e and not e.startswith("[")]
    raw = key.lower()
    return bool(_SECRET_WORDS.search(raw)) or bool(elements and _SECRET_LEAF.search(elements[-1]))


def masked(key: str, value: str) -> str:
    """The value as it may be stored: a secret key's as `SECRET_MARKER`, and URL passwords masked.

    A bare `${NAME}` reference is kept (it names where the value comes from); any URL's password and
    secret-looking query parameter in any value is replaced by the marker (`mask_credentials`).
    """
    if looks_secret(key) and value and not _REFERENCE.fullmatch(value.strip()):
        return SECRET_MARKER
    return mask_credentials(value)


def mask_credentials(text: str) -> str:
    """`scheme://user:pass@host` -> `scheme://user:<secret>@host`; `password=x` -> `password=<secret>`."""
    if "@" in text:
        text = _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{SECRET_MARKER}@", text)
    if "=" in text:
        text = _SECRET_PARAM.sub(lambda m: f"{m['name']}{SECRET_MARKER}", text)
    return text


def placeholders(text: str) -> list[tuple[str, str]]:
    """The `${key:default}` placeholders of an expression, outermost first: `[(key, default)]` (nested ones too)."""
    found: list[tuple[str, str]] = []
    start = text.find("${")
    while start >= 0:
        depth, i = 0, start
        while i < len(text):
            if text.startswith("${", i):
                depth += 1
                i += 2
                continue
            if text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        inner = text[start + 2 : i]
        key, _, default = _split_default(inner)
        if key:
            found.append((key.strip(), default))
        found.extend(placeholders(default))
        start = text.find("${", i + 1 if i < len(text) else len(text))
    return found


def _split_default(inner: str) -> tuple[str, str, str]:
    """`a.b:${c:d}` -> (`a.b`, `:`, `${c:d}`): the first `:` outside a nested placeholder."""
    depth = 0
    for i, c in enumerate(inner):
        if inner.startswith("${", i):
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == ":" and depth == 0:
            return inner[:i], ":", inner[i + 1 :]
    return inner, "", ""
