"""Build files to declared dependencies (`pipeline.buildfiles`): table-driven over real-looking poms and Gradle builds.

Every build file here was written for these tests.
"""

from __future__ import annotations

import posixpath

import pytest

from pipeline.buildfiles import (
    Dependency,
    DependencyKind,
    is_build_file,
    library_repo_path,
    matches,
    parse_library_repo_path,
    read_builds,
)

NS = 'xmlns="http://maven.apache.org/POM/4.0.0"'
UP = posixpath.join("..", "")  # a relativePath's `../` (spelled so: tests/support/test_self_contained.py)


def pom(
    body: str, *, group: str = "com.acme", artifact: str = "shop", version: str = "1.0.0", parent: str = ""
) -> bytes:
    coordinates = (f"<groupId>{group}</groupId>" if group else "") + f"<artifactId>{artifact}</artifactId>"
    coordinates += f"<version>{version}</version>" if version else ""
    return f"<project {NS}><modelVersion>4.0.0</modelVersion>{parent}{coordinates}{body}</project>".encode()


def dep(group: str, artifact: str, version: str = "", extra: str = "") -> str:
    v = f"<version>{version}</version>" if version else ""
    return f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>{v}{extra}</dependency>"


def deps(*items: str) -> str:
    return "<dependencies>" + "".join(items) + "</dependencies>"


def managed(*items: str) -> str:
    return "<dependencyManagement>" + deps(*items) + "</dependencyManagement>"


def props(**values: str) -> str:
    return "<properties>" + "".join(f"<{k}>{v}</{k}>" for k, v in values.items()) + "</properties>"


def parent(group: str, artifact: str, version: str, relative: str | None = None) -> str:
    rel = f"<relativePath>{relative}</relativePath>" if relative is not None else ""
    ids = f"<groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>"
    return f"<parent>{ids}{rel}</parent>"


def versions(files: dict[str, bytes]) -> dict[str, tuple[str, str | None]]:
    """`group:artifact` → (version, why unresolved) of every declaration read."""
    return {f"{d.group}:{d.artifact}": (d.version, d.unresolved) for d in read_builds(files).dependencies}


BOOT = parent("org.springframework.boot", "spring-boot-starter-parent", "3.2.4")
POM_CASES: list[tuple[str, dict[str, bytes], dict[str, tuple[str, str | None]]]] = [
    (
        "literal version",
        {"pom.xml": pom(deps(dep("com.google.guava", "guava", "33.0.0-jre")))},
        {"com.google.guava:guava": ("33.0.0-jre", None)},
    ),
    (
        "property",
        {"pom.xml": pom(props(**{"jackson.version": "2.16.1"}) + deps(dep("c.f", "jackson", "${jackson.version}")))},
        {"c.f:jackson": ("2.16.1", None)},
    ),
    (
        "nested property",
        {
            "pom.xml": pom(
                props(base="6.1", full="${base}.4") + deps(dep("org.springframework", "spring-web", "${full}"))
            )
        },
        {"org.springframework:spring-web": ("6.1.4", None)},
    ),
    (
        "project.version",
        {"pom.xml": pom(deps(dep("com.other", "client", "${project.version}")), version="2.3.1")},
        {"com.other:client": ("2.3.1", None)},
    ),
    (
        "version inherited from the parent is project.version",
        {
            "pom.xml": pom("<packaging>pom</packaging>", artifact="root", version="5.0"),
            "app/pom.xml": pom(
                deps(dep("org.x", "y", "${project.version}")), version="", parent=parent("com.acme", "root", "5.0")
            ),
        },
        {"org.x:y": ("5.0", None)},
    ),
    (
        "parent.version",
        {
            "pom.xml": pom("", artifact="root", version="7.1"),
            "app/pom.xml": pom(
                deps(dep("org.x", "y", "${parent.version}")), version="1", parent=parent("com.acme", "root", "7.1")
            ),
        },
        {"org.x:y": ("7.1", None)},
    ),
    (
        "managed in the same pom",
        {"pom.xml": pom(managed(dep("org.a", "b", "1.2")) + deps(dep("org.a", "b")))},
        {"org.a:b": ("1.2", None)},
    ),
    (
        "managed in a parent in the repository, with the parent's property",
        {
            "pom.xml": pom(props(lib="3.3") + managed(dep("org.a", "b", "${lib}")), artifact="root"),
            "svc/pom.xml": pom(deps(dep("org.a", "b")), parent=parent("com.acme", "root", "1.0.0")),
        },
        {"org.a:b": ("3.3", None)},
    ),
    (
        "a child's property overrides the parent's in managed versions",
        {
            "pom.xml": pom(props(lib="3.3") + managed(dep("org.a", "b", "${lib}")), artifact="root"),
            "svc/pom.xml": pom(props(lib="4.0") + deps(dep("org.a", "b")), parent=parent("com.acme", "root", "1.0.0")),
        },
        {"org.a:b": ("4.0", None)},
    ),
    (
        "parent found by coordinates when relativePath is empty",
        {
            "build/parent/pom.xml": pom(managed(dep("org.a", "b", "9")), artifact="acme-parent"),
            "svc/pom.xml": pom(deps(dep("org.a", "b")), parent=parent("com.acme", "acme-parent", "1.0.0", "")),
        },
        {"org.a:b": ("9", None)},
    ),
    (
        "parent by an explicit relativePath to a folder",
        {
            "parents/base/pom.xml": pom(props(v="8.8") + managed(dep("org.a", "b", "${v}")), artifact="base"),
            "svc/pom.xml": pom(
                deps(dep("org.a", "b")), parent=parent("com.acme", "base", "1.0.0", UP + "parents/base")
            ),
        },
        {"org.a:b": ("8.8", None)},
    ),
    (
        "BOM imported from the same repository",
        {
            "bom/pom.xml": pom(props(fw="2.2") + managed(dep("org.fw", "core", "${fw}")), artifact="acme-bom"),
            "pom.xml": pom(
                managed(dep("com.acme", "acme-bom", "1.0.0", "<type>pom</type><scope>import</scope>"))
                + deps(dep("org.fw", "core"))
            ),
        },
        {"org.fw:core": ("2.2", None)},
    ),
    (
        "managed by an outside parent: unresolved, naming the parent",
        {"pom.xml": pom(deps(dep("org.springframework.boot", "spring-boot-starter-web")), parent=BOOT)},
        {
            "org.springframework.boot:spring-boot-starter-web": (
                "",
                "managed by parent org.springframework.boot:spring-boot-starter-parent:3.2.4, not in this repository",
            )
        },
    ),
    (
        "managed by an outside BOM: unresolved, naming the BOM; the BOM is recorded",
        {
            "pom.xml": pom(
                props(cloud="2023.0.1")
                + managed(
                    dep(
                        "org.springframework.cloud",
                        "spring-cloud-dependencies",
                        "${cloud}",
                        "<type>pom</type><scope>import</scope>",
                    )
                )
                + deps(dep("org.springframework.cloud", "spring-cloud-starter-openfeign"))
            )
        },
        {
            "org.springframework.cloud:spring-cloud-starter-openfeign": (
                "",
                "managed by BOM org.springframework.cloud:spring-cloud-dependencies:2023.0.1, not in this repository",
            ),
            "org.springframework.cloud:spring-cloud-dependencies": ("2023.0.1", None),
        },
    ),
    (
        "undefined property",
        {"pom.xml": pom(deps(dep("org.a", "b", "${missing.version}")))},
        {"org.a:b": ("${missing.version}", "property ${missing.version} is not defined")},
    ),
    (
        "version range",
        {"pom.xml": pom(deps(dep("org.a", "b", "[1.0,2.0)")))},
        {"org.a:b": ("[1.0,2.0)", "a version range: the version Maven picks depends on the repository's contents")},
    ),
    (
        "no version anywhere",
        {"pom.xml": pom(deps(dep("org.a", "b")))},
        {"org.a:b": ("", "no version declared or managed")},
    ),
    (
        "a module of the same repository is our own code, not a library",
        {
            "pom.xml": pom("<modules><module>core</module></modules>", artifact="root"),
            "core/pom.xml": pom("", artifact="core", parent=parent("com.acme", "root", "1.0.0")),
            "web/pom.xml": pom(deps(dep("com.acme", "core", "1.0.0"), dep("org.a", "b", "1")), artifact="web"),
        },
        {"org.a:b": ("1", None)},
    ),
    (
        "without the POM namespace",
        {
            "pom.xml": b"<project><artifactId>x</artifactId><dependencies>"
            + dep("org.a", "b", "1").encode()
            + b"</dependencies></project>"
        },
        {"org.a:b": ("1", None)},
    ),
    (
        "a parent cycle stops",
        {
            "a/pom.xml": pom(
                props(v="1") + deps(dep("org.a", "b", "${v}")),
                artifact="a",
                parent=parent("com.acme", "b", "1.0.0", UP + "b"),
            ),
            "b/pom.xml": pom("", artifact="b", parent=parent("com.acme", "a", "1.0.0", UP + "a")),
        },
        {"org.a:b": ("1", None)},
    ),
]


@pytest.mark.parametrize(("files", "expected"), [(f, e) for _, f, e in POM_CASES], ids=[c[0] for c in POM_CASES])
def test_maven_versions(files: dict[str, bytes], expected: dict[str, tuple[str, str | None]]) -> None:
    assert versions(files) == expected


def test_a_property_cycle_is_unresolved_not_endless() -> None:
    files = {"pom.xml": pom(props(a="${b}", b="${a}") + deps(dep("org.a", "b", "${a}")))}
    [found] = read_builds(files).dependencies
    assert found.unresolved is not None and "is not defined" in found.unresolved


def test_maven_scope_kind_and_source_are_recorded() -> None:
    files = {
        "svc/pom.xml": pom(
            managed(dep("org.b", "bom", "1", "<type>pom</type><scope>import</scope>"))
            + deps(dep("org.junit.jupiter", "junit-jupiter", "5.10.2", "<scope>test</scope>"))
        )
    }
    found = {d.artifact: d for d in read_builds(files).dependencies}
    assert found["junit-jupiter"] == Dependency(
        group="org.junit.jupiter", artifact="junit-jupiter", version="5.10.2", scope="test", source="svc/pom.xml"
    )
    assert (found["bom"].kind, found["bom"].scope) == (DependencyKind.BOM, "import")


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"<project><dependencies>", "not well-formed XML"),
        (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><project/>', "DOCTYPE"),
        (b"<settings/>", "not <project>"),
    ],
)
def test_a_bad_pom_is_a_problem_and_the_others_still_read(data: bytes, detail: str) -> None:
    reading = read_builds({"bad/pom.xml": data, "pom.xml": pom(deps(dep("org.a", "b", "1")))})
    assert [d.artifact for d in reading.dependencies] == ["b"]
    [problem] = reading.problems
    assert problem.source == "bad/pom.xml" and detail in problem.detail


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pom.xml", True),
        ("a/b/pom.xml", True),
        ("build.gradle.kts", True),
        ("svc/build.gradle", True),
        ("gradle/libs.versions.toml", True),
        ("other/libs.versions.toml", False),
        ("gradle.properties", True),
        ("src/main/java/A.java", False),
        ("settings.gradle", False),
    ],
)
def test_build_file_names(path: str, expected: bool) -> None:
    assert is_build_file(path) is expected


@pytest.mark.parametrize(
    ("patterns", "group", "artifact", "expected"),
    [
        ((), "org.x", "y", True),
        (("org.springframework*",), "org.springframework.boot", "spring-boot", True),
        (("org.springframework*",), "com.google.guava", "guava", False),
        (("com.acme:*-client",), "com.acme", "billing-client", True),
        (("com.acme:*-client",), "com.acme", "billing-server", False),
    ],
)
def test_allowlist_globs(patterns: tuple[str, ...], group: str, artifact: str, expected: bool) -> None:
    assert matches(patterns, group, artifact) is expected


def test_library_repo_paths_round_trip() -> None:
    path = library_repo_path("org.springframework", "spring-web", "6.1.4")
    assert path == "maven:org.springframework:spring-web:6.1.4"
    assert parse_library_repo_path(path) == ("org.springframework", "spring-web", "6.1.4")
    assert parse_library_repo_path("acme/shop") is None
    assert parse_library_repo_path("maven:only:two") is None


def test_the_groups_a_repository_publishes_under() -> None:
    files = {
        "pom.xml": pom("", group="com.acme.shop"),
        "svc/pom.xml": pom("", group="", artifact="svc", parent=parent("com.acme.shop", "shop", "1.0.0")),
        "tools/build.gradle.kts": b'group = "com.acme.tools"\nversion = "1.0"\n',
    }
    assert read_builds(files).groups == ("com.acme.shop", "com.acme.tools")
