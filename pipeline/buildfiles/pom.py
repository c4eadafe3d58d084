"""Maven `pom.xml` files of one repository: declared dependencies with versions resolved as far as the files allow.

Resolution follows Maven's effective model where the repository holds the files it needs:

- a parent found by `relativePath` (default `../pom.xml`) or by its coordinates among the
  repository's poms contributes its properties, `dependencyManagement` and its own parent;
- `${...}` is replaced from the child's effective properties (a child overrides its parents), plus
  `project.version`/`project.groupId`/`project.artifactId`, `parent.*` and the legacy `pom.*`;
- a BOM import (`<scope>import</scope>` in `dependencyManagement`) found in the repository adds its
  managed versions, resolved in its own effective model.

What stays unresolved says why: a parent or a BOM outside the repository, an undefined property,
a version range. A dependency on another module of the same repository is our own code, not a
library: it is left out. XML with a DOCTYPE is refused (no entity expansion). Interpolation is
bounded (`model.Work`): a value stops at `MAX_VALUE_CHARS`, a pom at `MAX_WORK`, and each pom's
effective model is built once per repository, so nothing a pom writes grows past them. Pure: no I/O.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pipeline.buildfiles.model import OVER_VALUE, OVER_WORK, Dependency, DependencyKind, Problem, Work, expand

PROPERTY = re.compile(r"\$\{([^}$]+)\}")  # no `$` in a name: `${${${...` is one pass, not N^2 (issue 24)
MAX_DEPTH = 10  # parents, BOMs and nested properties followed at most (a cycle stops here)


@dataclass(slots=True)
class Pom:
    """One pom as written (no inheritance applied)."""

    path: str
    group: str | None
    artifact: str | None
    version: str | None
    parent: tuple[str, str, str, str] | None  # group, artifact, version, relative path
    properties: dict[str, str] = field(default_factory=dict)
    managed: list[dict[str, str]] = field(default_factory=list)
    dependencies: list[dict[str, str]] = field(default_factory=list)

    @property
    def effective_group(self) -> str | None:
        """The group, inherited from the parent when not written."""
        return self.group or (self.parent[0] if self.parent else None)

    @property
    def effective_version(self) -> str | None:
        """The version, inherited from the parent when not written."""
        return self.version or (self.parent[2] if self.parent else None)


def parse_pom(path: str, data: bytes) -> Pom | Problem:
    """One pom's declarations, or why it cannot be read."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return Problem(source=path, detail="a DOCTYPE or entity declaration is not read (entity expansion)")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return Problem(source=path, detail=f"not well-formed XML: {exc}")
    _strip_namespaces(root)
    if root.tag != "project":
        return Problem(source=path, detail=f"the root element is <{root.tag}>, not <project>")
    parent = root.find("parent")
    return Pom(
        path=path,
        group=_text(root, "groupId"),
        artifact=_text(root, "artifactId"),
        version=_text(root, "version"),
        parent=(
            (
                _text(parent, "groupId") or "",
                _text(parent, "artifactId") or "",
                _text(parent, "version") or "",
                (_text(parent, "relativePath") or "") if parent.find("relativePath") is not None else "../pom.xml",
            )
            if parent is not None
            else None
        ),
        properties={child.tag: (child.text or "").strip() for child in root.findall("properties/*")},
        managed=[_dependency(d) for d in root.findall("dependencyManagement/dependencies/dependency")],
        dependencies=[_dependency(d) for d in root.findall("dependencies/dependency")],
    )


def _strip_namespaces(root: ET.Element) -> None:
    for element in root.iter():
        if isinstance(element.tag, str) and "}" in element.tag:
            element.tag = element.tag.split("}", 1)[1]


def _text(element: ET.Element | None, tag: str) -> str | None:
    found = element.find(tag) if element is not None else None
    text = (found.text or "").strip() if found is not None else ""
    return text or None


def _dependency(element: ET.Element) -> dict[str, str]:
    return {tag: _text(element, tag) or "" for tag in ("groupId", "artifactId", "version", "scope", "type")}


@dataclass(slots=True)
class _Model:
    """A pom's effective model as far as the repository's files give it."""

    properties: dict[str, str]
    managed: dict[tuple[str, str], str]  # (group, artifact) -> version as written, resolved against `properties`
    outside: list[str]  # what manages versions from outside the repository (a parent, a BOM)


class PomSet:
    """Every pom of one repository, by path and by coordinates."""

    def __init__(self, poms: Mapping[str, Pom]) -> None:
        self.poms = dict(poms)
        self.by_coordinates = {(p.effective_group, p.artifact): p for p in poms.values() if p.artifact}
        self._models: dict[str, _Model] = {}  # built once: a BOM imported six times by itself is not 6^10 models

    def parent_of(self, pom: Pom) -> Pom | None:
        """The parent pom when the repository holds it (by relative path, then by coordinates)."""
        if pom.parent is None:
            return None
        group, artifact, _, relative = pom.parent
        if relative:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(pom.path), relative))
            candidate = self.poms.get(target) or self.poms.get(posixpath.join(target, "pom.xml"))
            if candidate is not None and candidate.artifact == artifact:
                return candidate
        return self.by_coordinates.get((group, artifact))

    def model(self, pom: Pom, work: Work, depth: int = 0) -> _Model:
        """Properties and managed versions of `pom`, its parents' first (a child overrides them)."""
        known = self._models.get(pom.path)
        if known is None:
            known = self._models[pom.path] = self._build(pom, work, depth)
        return known

    def _build(self, pom: Pom, work: Work, depth: int) -> _Model:
        if not work.spend(1 + len(pom.properties) + len(pom.managed)):
            return _Model(properties={}, managed={}, outside=[])
        parent = self.parent_of(pom) if depth < MAX_DEPTH else None
        if parent is not None:
            inherited = self.model(parent, work, depth + 1)
            properties, managed, outside = dict(inherited.properties), dict(inherited.managed), list(inherited.outside)
        else:
            properties, managed, outside = {}, {}, []
            if pom.parent is not None:
                outside.append("parent " + ":".join(pom.parent[:3]))
        properties.update(pom.properties)
        properties.update(_builtins(pom))
        lookup = _lookup(properties)
        for entry in pom.managed:
            group, _ = interpolate(entry["groupId"], lookup, work)
            artifact, _ = interpolate(entry["artifactId"], lookup, work)
            if entry["scope"] == "import" and entry["type"] == "pom":
                self._import(group, artifact, entry["version"], lookup, managed, outside, work, depth)
            else:
                managed[(group, artifact)] = entry["version"]
        return _Model(properties=properties, managed=managed, outside=outside)

    def _import(
        self,
        group: str,
        artifact: str,
        version: str,
        lookup: Callable[[str], str | None],
        managed: dict[tuple[str, str], str],
        outside: list[str],
        work: Work,
        depth: int,
    ) -> None:
        bom = self.by_coordinates.get((group, artifact)) if depth < MAX_DEPTH else None
        if bom is None:
            outside.append(f"BOM {group}:{artifact}:{interpolate(version, lookup, work)[0]}")
            return
        imported = self.model(bom, work, depth + 1)
        bom_lookup = _lookup(imported.properties)
        for key, written in imported.managed.items():
            managed.setdefault(key, interpolate(written, bom_lookup, work)[0])  # the BOM's own properties


def _builtins(pom: Pom) -> dict[str, str]:
    values = {
        "project.groupId": pom.effective_group,
        "project.artifactId": pom.artifact,
        "project.version": pom.effective_version,
        "parent.groupId": pom.parent[0] if pom.parent else None,
        "parent.artifactId": pom.parent[1] if pom.parent else None,
        "parent.version": pom.parent[2] if pom.parent else None,
    }
    values |= {"project.parent." + k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("parent.")}
    values |= {"pom." + k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("project.")}
    values["version"] = pom.effective_version
    return {k: v for k, v in values.items() if v}


def _lookup(properties: Mapping[str, str]) -> Callable[[str], str | None]:
    return properties.get


def interpolate(text: str, lookup: Callable[[str], str | None], work: Work) -> tuple[str, str | None]:
    """`text` with `${name}` replaced (nested ones too), and why it is not resolved (None: it is).

    Not resolved: a name no lookup knows (or that cycles past MAX_DEPTH), or a bound of `work` hit.
    """
    for _ in range(MAX_DEPTH):
        names = PROPERTY.findall(text)
        if not names:
            return text, None
        unknown = next((name for name in names if lookup(name) is None), None)
        if unknown is not None:
            return text, _undefined(unknown)
        text, over = expand(text, PROPERTY, lambda m: lookup(m.group(1)) or "", work)
        if over is not None:
            return text, over
    found = PROPERTY.search(text)
    return text, _undefined(found.group(1)) if found else None


def _undefined(name: str) -> str:
    return f"property ${{{name}}} is not defined"


def read_poms(files: Mapping[str, bytes]) -> tuple[list[Dependency], list[Problem], set[str]]:
    """The dependencies every pom of a repository declares, resolved as far as its poms allow; its own groups."""
    poms: dict[str, Pom] = {}
    problems: list[Problem] = []
    for path, data in sorted(files.items()):
        parsed = parse_pom(path, data)
        if isinstance(parsed, Problem):
            problems.append(parsed)
        else:
            poms[path] = parsed
    repository = PomSet(poms)
    found: list[Dependency] = []
    for pom in poms.values():
        work = Work()
        found.extend(_declared(repository, pom, work))
        if work.hit is not None:
            problems.append(Problem(source=pom.path, detail=work.hit))
    groups = {group for pom in poms.values() if (group := pom.effective_group) and "${" not in group}
    return found, problems, groups


def _declared(repository: PomSet, pom: Pom, work: Work) -> list[Dependency]:
    model = repository.model(pom, work)
    lookup = _lookup(model.properties)
    out: list[Dependency] = []
    imports = [
        (entry, DependencyKind.BOM) for entry in pom.managed if entry["scope"] == "import" and entry["type"] == "pom"
    ]
    for entry, kind in [*((e, DependencyKind.LIBRARY) for e in pom.dependencies), *imports]:
        group, _ = interpolate(entry["groupId"], lookup, work)
        artifact, _ = interpolate(entry["artifactId"], lookup, work)
        if not group or not artifact or (group, artifact) in repository.by_coordinates:
            continue  # incomplete, or a module of this repository (our own code)
        version, why = _version(entry["version"], model.managed.get((group, artifact)), lookup, model.outside, work)
        scope = entry["scope"] if kind is DependencyKind.LIBRARY else "import"
        out.append(
            Dependency(
                group=group, artifact=artifact, version=version, kind=kind, scope=scope, source=pom.path, unresolved=why
            )
        )
    return out


def _version(
    written: str, managed: str | None, lookup: Callable[[str], str | None], outside: list[str], work: Work
) -> tuple[str, str | None]:
    """The version and why it is unresolved (None: resolved)."""
    source = written or managed
    if not source:
        if outside:
            return "", "managed by " + " or ".join(outside) + ", not in this repository"
        return "", "no version declared or managed"
    version, why = interpolate(source, lookup, work)
    if why is not None:
        undefined = why not in (OVER_VALUE, OVER_WORK) and outside
        return version, why + (f" (perhaps in {' or '.join(outside)}, not in this repository)" if undefined else "")
    if version[:1] in "[(" or "," in version:
        return version, "a version range: the version Maven picks depends on the repository's contents"
    return version, None
