"""Gradle build files (`build.gradle`, `build.gradle.kts`) and version catalogs (`gradle/libs.versions.toml`).

Gradle builds are programs; this reads the common declaration forms, not the language:

- string notation: `implementation 'g:a:v'`, `implementation("g:a:v")`, `api "g:a:v:classifier@jar"`;
- map notation: `implementation group: 'g', name: 'a', version: 'v'` and Kotlin's `(group = "g", ...)`;
- platforms: `implementation platform('g:a:v')`, `enforcedPlatform(...)` (recorded as BOMs);
- catalog accessors: `implementation(libs.spring.web)`, `libs.bundles.x` (each member), from the
  nearest `gradle/libs.versions.toml` above the build file (`version.ref`, rich `strictly`/`require`/`prefer`);
- versions from variables: `$springVersion`, `${springVersion}`, `${libs.versions.x.get()}`,
  `${property("x")}`, `${extra["x"]}`, defined by `ext`/`extra`/`def`/`val`/`set(...)` in the build files of
  the folders above, or in `gradle.properties`;
- the Kotlin DSL's own forms: `"implementation"("g:a:v")`, `add("implementation", "g:a:v")`, `kotlin("reflect")`
  (`org.jetbrains.kotlin:kotlin-reflect`); an `org.jetbrains.kotlin` module without a version gets the
  Kotlin plugin's (`kotlin("jvm") version "2.1.0"` in the script or one above it), as the plugin gives it.

Not resolved, and said so: a declaration without a version (a platform or Spring's dependency-management
plugin picks it), dynamic versions (`1.+`, `latest.release`, ranges), variables defined elsewhere.
`project(':x')`, `files(...)` and `buildscript` classpaths are not dependencies of the code. Variable
expansion is bounded per value and per script (`model.Work`, issue 24); the catalog interpolates nothing. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

from pipeline.buildfiles.model import (
    CATALOG,
    GRADLE,
    GRADLE_PROPERTIES,
    Dependency,
    DependencyKind,
    Problem,
    Work,
    expand,
)

KNOWN = (
    "implementation|api|compileOnly|runtimeOnly|compile|runtime|annotationProcessor|kapt|developmentOnly"
    "|testImplementation|testCompileOnly|testRuntimeOnly|testCompile|testRuntime|testAnnotationProcessor"
    "|testFixturesImplementation|testFixturesApi|integrationTestImplementation|compileOnlyApi|providedCompile"
    "|providedRuntime|ksp"
)
CONFIGURATION = rf"(?P<conf>\b(?:{KNOWN})\b)"
# Blanks, an optional `(`, blanks: written so that a run of blanks has one way to match. `\s*\(?\s*` had
# N of them: a line of 20,000 blanks after `implementation` took 33 s (issue 24, bench/build_bomb.py).
OPEN = r"\s*(?:\(\s*)?"
# A notation's `${...}` may quote a name (`${property("v")}`); `$` starts one way only, so no run backtracks.
NOTATION = r"(?P<notation>(?:\$\{[^}\"'\n]*(?:\"[\w.\-]*\"[^}\"'\n]*)?\}|\$(?!\{)|[^\"'\n$])+)"
PLATFORM = r"(?:(?P<platform>platform|enforcedPlatform)\s*\(\s*)?"
STRING = re.compile(CONFIGURATION + r"[\"']?" + OPEN + PLATFORM + r"(?P<q>[\"'])" + NOTATION + r"(?P=q)")
ADD = re.compile(
    r"\badd\(\s*[\"']" + CONFIGURATION + r"[\"']\s*,\s*" + PLATFORM + r"(?P<q>[\"'])" + NOTATION + r"(?P=q)"
)
KOTLIN_MODULE = re.compile(
    CONFIGURATION + OPEN + r"kotlin\(\s*\"(?P<module>[\w.\-]+)\"(?:\s*,\s*\"(?P<version>[^\"\n]*)\")?\s*\)"
)
KOTLIN_PLUGIN = re.compile(
    r"(?:\bkotlin\(\s*\"[\w.\-]+\"\s*\)|\bid\(\s*\"org\.jetbrains\.kotlin\.[\w.\-]+\"\s*\))"
    r"\s*version\s*(?:\"(?P<version>[^\"\n]+)\"|(?P<name>[A-Za-z_]\w*))"
)
KOTLIN_GROUP = "org.jetbrains.kotlin"
PROPERTY_CALL = re.compile(
    r"\$\{\s*(?:(?:project|rootProject)\.)?(?:(?:property|findProperty)\(\s*\"([\w.\-]+)\"\s*\)"
    r"|extra\[\s*\"([\w.\-]+)\"\s*\])\s*\}"
)
MAP = re.compile(CONFIGURATION + OPEN + r"(?P<args>group\s*[:=][^\n)]*)")
MAP_ARG = re.compile(r"\b(group|name|version)\s*[:=]\s*[\"']([^\"'\n]*)[\"']")
ACCESSOR = re.compile(
    CONFIGURATION + OPEN + r"(?:(?P<platform>platform|enforcedPlatform)\s*\(\s*)?libs\.(?P<alias>[A-Za-z0-9_.\-]+)"
)
VARIABLE = re.compile(r"\$\{?([A-Za-z_][\w.]*(?:\(\))?)\}?")
CATALOG_VERSION = re.compile(r"^libs\.versions\.([\w.\-]+?)(?:\.get)?$")
ASSIGNMENTS = (
    re.compile(
        r"(?:\bext\.|\bdef\s+|\bval\s+|\bvar\s+|\bString\s+|^|[{;\s])([A-Za-z_]\w*)\s*=\s*[\"']([^\"'$\n]+)[\"']"
    ),
    re.compile(r"\b(?:ext|extra)\[\s*[\"']([\w.\-]+)[\"']\s*\]\s*=\s*[\"']([^\"'$\n]+)[\"']"),
    re.compile(r"\bset\(\s*[\"']([\w.\-]+)[\"']\s*,\s*[\"']([^\"'$\n]+)[\"']\s*\)"),
    re.compile(r"\bval\s+([A-Za-z_]\w*)\s+by\s+extra\(\s*[\"']([^\"'$\n]+)[\"']\s*\)"),
)
COMMENTS = re.compile(r"/\*.*?\*/|(?:^|(?<=\s))//[^\n]*", re.DOTALL)
NO_VERSION = "no version: a platform, a BOM or Spring's dependency-management plugin picks it (not resolved)"
NO_KOTLIN_VERSION = "no version: the Kotlin Gradle plugin's version, not written in the build files read"


def _dynamic(version: str) -> bool:
    return version.endswith("+") or version.startswith(("latest.", "[", "(")) or "," in version


class Catalog:
    """A version catalog's libraries and bundles by accessor (`spring.web`)."""

    def __init__(self, path: str, data: Mapping[str, Any]) -> None:
        self.path = path
        self.versions = {_accessor(k): _rich(v) for k, v in dict(data.get("versions", {})).items()}
        self.libraries: dict[str, tuple[str, str, str, str | None]] = {}
        for key, spec in dict(data.get("libraries", {})).items():
            entry = self._library(spec)
            if entry is not None:
                self.libraries[_accessor(key)] = entry
        self.bundles = {_accessor(k): [_accessor(m) for m in v] for k, v in dict(data.get("bundles", {})).items()}

    def _library(self, spec: Any) -> tuple[str, str, str, str | None] | None:
        """(group, artifact, version, why unresolved) of one `[libraries]` entry."""
        if isinstance(spec, str):
            parts = spec.split(":")
            if len(parts) < 2:
                return None
            version = parts[2] if len(parts) > 2 else ""
            return parts[0], parts[1], version, None if version else NO_VERSION
        if not isinstance(spec, dict):
            return None
        module = spec.get("module")
        written = module.split(":", 1) if isinstance(module, str) and ":" in module else None
        group: Any = written[0] if written else spec.get("group")
        artifact: Any = written[1] if written else spec.get("name")
        if not isinstance(group, str) or not isinstance(artifact, str):
            return None
        declared = spec.get("version")
        ref = declared.get("ref") if isinstance(declared, dict) else None  # TOML reads `version.ref` as a table
        if isinstance(ref, str):
            found = self.versions.get(_accessor(ref))
            return group, artifact, found or "", None if found else f"version.ref {ref!r} is not in [versions]"
        text = _rich(declared) if declared is not None else ""
        return group, artifact, text, None if text else NO_VERSION

    def resolve(self, alias: str) -> list[tuple[str, str, str, str | None]] | None:
        """The libraries an accessor names (a bundle's members), or None when the catalog has no such alias."""
        alias = re.sub(r"\.get$", "", alias.rstrip("."))
        if alias.startswith("bundles."):
            members = self.bundles.get(alias.removeprefix("bundles."))
            return None if members is None else [self.libraries[m] for m in members if m in self.libraries]
        found = self.libraries.get(alias)
        return None if found is None else [found]


def _accessor(key: str) -> str:
    """Gradle's accessor of a catalog key: `spring-web`, `spring_web` and `spring.web` are all `spring.web`."""
    return re.sub(r"[-_]", ".", key)


def _rich(version: Any) -> str:
    """A version as written, or a rich version's `strictly`, then `require`, then `prefer`."""
    if isinstance(version, str):
        return version
    if isinstance(version, dict):
        for key in ("strictly", "require", "prefer"):
            if isinstance(version.get(key), str):
                return str(version[key])
    return ""


def parse_catalog(path: str, data: bytes) -> Catalog | Problem:
    """A version catalog, or why it cannot be read."""
    try:
        return Catalog(path, tomllib.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError, TypeError) as exc:
        return Problem(source=path, detail=f"not a readable version catalog: {exc}")


def parse_properties(data: bytes) -> dict[str, str]:
    """`key=value` / `key: value` lines of a `gradle.properties` (comments and blank lines skipped)."""
    out: dict[str, str] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, rest = _split(line)
        if sep:
            out[key] = rest
    return out


def _split(line: str) -> tuple[str, str, str]:
    match = re.match(r"([^=:\s]+)\s*([=:])\s*(.*)$", line)
    return (match.group(1), match.group(2), match.group(3).strip()) if match else (line, "", "")


def strip_comments(text: str) -> str:
    """Build script text without `/* */` and `//` comments (a `//` inside a URL string is kept)."""
    return COMMENTS.sub("", text)


def variables(text: str) -> dict[str, str]:
    """Names assigned a literal string in a build script (`ext.x = '1'`, `val x = "1"`, `set("x", "1")`)."""
    found: dict[str, str] = {}
    for pattern in ASSIGNMENTS:
        for match in pattern.finditer(text):
            found.setdefault(match.group(1), match.group(2))
    return found


class GradleBuild:
    """Every Gradle file of one repository; `declared(path)` reads one build script."""

    def __init__(self, files: Mapping[str, bytes], *, read: Callable[[str], dict[str, str]] | None = None) -> None:
        self._read = read or variables  # how a script's assignments are read (a test counts the calls)
        self.problems: list[Problem] = []
        self.scripts = {
            p: strip_comments(d.decode("utf-8", errors="replace")) for p, d in files.items() if _is_script(p)
        }
        self.properties = {
            posixpath.dirname(p): parse_properties(d) for p, d in files.items() if _named(p, GRADLE_PROPERTIES)
        }
        self.catalogs: dict[str, Catalog] = {}
        self._assigned: dict[str, dict[str, str]] = {}
        for path, data in files.items():
            if path == CATALOG or path.endswith("/" + CATALOG):
                parsed = parse_catalog(path, data)
                if isinstance(parsed, Problem):
                    self.problems.append(parsed)
                else:
                    self.catalogs[posixpath.dirname(posixpath.dirname(path))] = parsed

    def _scope(self, path: str) -> tuple[dict[str, str], Catalog | None]:
        """The variables a script sees (its folders' `gradle.properties` and scripts, nearest last) and its catalog."""
        folders = _ancestors(posixpath.dirname(path))
        names: dict[str, str] = {}
        for folder in folders:
            names.update(self.properties.get(folder, {}))
            for script in (posixpath.join(folder, n) if folder else n for n in GRADLE):
                names.update(self.assigned(script))
        catalog = next((self.catalogs[f] for f in reversed(folders) if f in self.catalogs), None)
        return names, catalog

    def assigned(self, script: str) -> dict[str, str]:
        """A script's `variables`, read once: a root script is in the scope of every script below it."""
        found = self._assigned.get(script)
        if found is None:
            found = self._assigned[script] = self._read(self.scripts.get(script, ""))
        return found

    def declared(self, path: str) -> list[Dependency]:
        """The dependencies one build script declares, in the order written."""
        text = self.scripts[path]
        names, catalog = self._scope(path)
        work = Work()
        found: list[tuple[int, Dependency]] = []
        for match in (*STRING.finditer(text), *ADD.finditer(text)):
            dependency = self._notation(path, match, names, catalog, work)
            if dependency is not None:
                found.append((match.start(), dependency))
        kotlin = self._kotlin_version(path, names)
        found += self._kotlin_modules(path, text, names, catalog, work, kotlin)
        for match in MAP.finditer(text):
            args = dict(MAP_ARG.findall(match.group("args")))
            if args.get("group") and args.get("name"):
                version, why = self._version(args.get("version", ""), names, catalog, work)
                found.append((match.start(), self._dep(path, match, args["group"], args["name"], version, why)))
        for match in ACCESSOR.finditer(text):
            alias = match.group("alias")
            if alias.startswith(("versions.", "plugins.")):
                continue
            entries = catalog.resolve(alias) if catalog is not None else None
            if entries is None:
                where = catalog.path if catalog else "no gradle/libs.versions.toml above this file"
                self.problems.append(
                    Problem(source=path, detail=f"libs.{alias} is not in the version catalog ({where})")
                )
                continue
            for group, artifact, version, why in entries:
                if why is None and _dynamic(version):
                    why = f"a dynamic version ({version}): the version Gradle picks depends on the repository"
                found.append((match.start(), self._dep(path, match, group, artifact, version, why)))
        if work.hit is not None:
            self.problems.append(Problem(source=path, detail=work.hit))
        declared = [d for _, d in sorted(found, key=lambda pair: pair[0])]
        if kotlin is None:
            return declared
        # The Kotlin Gradle plugin gives its own version to an `org.jetbrains.kotlin` module declared without one.
        return [
            dataclasses.replace(d, version=kotlin, unresolved=None) if d.group == KOTLIN_GROUP and not d.version else d
            for d in declared
        ]

    def _kotlin_modules(
        self, path: str, text: str, names: Mapping[str, str], catalog: Catalog | None, work: Work, kotlin: str | None
    ) -> list[tuple[int, Dependency]]:
        """`kotlin("reflect")`, `kotlin("stdlib", "1.9.0")`: `org.jetbrains.kotlin` modules, of the plugin's version."""
        found: list[tuple[int, Dependency]] = []
        for match in KOTLIN_MODULE.finditer(text):
            written = match.group("version")
            version, why = self._version(written, names, catalog, work) if written else (kotlin or "", None)
            why = why or (None if version else NO_KOTLIN_VERSION)
            artifact = f"kotlin-{match.group('module')}"
            found.append((match.start(), self._dep(path, match, KOTLIN_GROUP, artifact, version, why)))
        return found

    def _kotlin_version(self, path: str, names: Mapping[str, str]) -> str | None:
        """The Kotlin Gradle plugin's version a script or a script above it applies (`kotlin("jvm") version ...`)."""
        found: str | None = None
        for folder in _ancestors(posixpath.dirname(path)):
            for script in (posixpath.join(folder, n) if folder else n for n in GRADLE):
                match = KOTLIN_PLUGIN.search(self.scripts.get(script, ""))
                if match is not None:
                    found = match.group("version") or names.get(match.group("name")) or found
        return found

    def _notation(
        self, path: str, match: re.Match[str], names: Mapping[str, str], catalog: Catalog | None, work: Work
    ) -> Dependency | None:
        notation = match.group("notation").split("@", 1)[0]
        parts = notation.split(":")
        if len(parts) < 2 or not parts[0] or not parts[1] or " " in notation:
            return None
        version, why = self._version(parts[2] if len(parts) > 2 else "", names, catalog, work)
        return self._dep(path, match, parts[0], parts[1], version, why)

    def _version(
        self, written: str, names: Mapping[str, str], catalog: Catalog | None, work: Work
    ) -> tuple[str, str | None]:
        if not written:
            return "", NO_VERSION
        written = PROPERTY_CALL.sub(lambda m: "${" + (m.group(1) or m.group(2)) + "}", written)
        missing: list[str] = []

        def replace(variable: re.Match[str]) -> str:
            name = variable.group(1)
            from_catalog = CATALOG_VERSION.match(name.removesuffix("()"))
            if from_catalog and catalog is not None:
                value = catalog.versions.get(_accessor(from_catalog.group(1)))
            else:
                value = names.get(name.removeprefix("project.").removeprefix("rootProject."))
            if value is None:
                missing.append(name)
                return variable.group(0)
            return value

        version, over = expand(written, VARIABLE, replace, work)
        if over is not None:
            return version, over
        if missing:
            return version, f"variable {missing[0]} is not defined in the build files or gradle.properties read"
        if _dynamic(version):
            return version, f"a dynamic version ({version}): the version Gradle picks depends on the repository"
        return version, None

    @staticmethod
    def _dep(path: str, match: re.Match[str], group: str, artifact: str, version: str, why: str | None) -> Dependency:
        platform = "platform" in match.groupdict() and match.group("platform")
        return Dependency(
            group=group,
            artifact=artifact,
            version=version,
            kind=DependencyKind.BOM if platform else DependencyKind.LIBRARY,
            scope=match.group("conf"),
            source=path,
            unresolved=why,
        )


def _named(path: str, name: str) -> bool:
    return path.rsplit("/", 1)[-1] == name


def _is_script(path: str) -> bool:
    return any(_named(path, name) for name in GRADLE)


def _ancestors(folder: str) -> list[str]:
    """`a/b` → `["", "a", "a/b"]`: the root first."""
    parts = [p for p in folder.split("/") if p]
    return ["", *("/".join(parts[: i + 1]) for i in range(len(parts)))]


def read_gradle(files: Mapping[str, bytes]) -> tuple[list[Dependency], list[Problem], set[str]]:
    """The dependencies every Gradle build script of a repository declares; the groups it publishes under."""
    build = GradleBuild(files)
    found: list[Dependency] = []
    for path in sorted(build.scripts):
        found.extend(build.declared(path))
    groups = {group for path in build.scripts if (group := build.assigned(path).get("group"))}
    return found, build.problems, groups
